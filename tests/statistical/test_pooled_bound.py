"""The pooled bound (mia.pooled_split_bound, betting) accuses no mechanism of known eps.

A reduced version of ``benchmarks/pooled_validity.py`` (``docs/validation/pooled_bound.md``): the
configurations where the betting bound comes closest to the truth (it is far from vacuous and
the targets' mean error point lies on the boundary of R(eps, delta)): Laplace eps0 = 1 at
alpha 0.1 with 1,024 models (the test's threshold lies above eps0, so every target's point is on
the straight boundary FNR = 1 - delta - e^eps FPR), randomized response at its corner (256
models), eps = 0 (every target's point on FPR + FNR = 1) and Laplace eps0 = 3 at alpha 0.01 with
a per-model shift; and the data-blind attack of the balanced design, which the per-model rates
without coins let accuse an eps = 0 mechanism (``docs/validation/pooled_bound.md``, "The balanced
design").
Each audit's exact rates come from the closed-form rates of the fitted test
(``tests/_support/pooled_sim.py``).
"""

import numpy as np
import pytest

from tests._support.pooled_sim import audit

CONFIGS = [
    ("laplace", 1.0, 0.0, "independent", 1024, 64, 0.1),
    ("rr", 1.0, 0.0, "balanced", 256, 64, 0.1),
    ("gauss", 0.0, 0.0, "independent", 1024, 64, 0.1),
    ("laplace", 3.0, 0.25, "balanced", 256, 64, 0.01),
]
KEYS = ("mech", "param", "shift", "design", "models", "targets", "alpha")


def _limit(rate, n):
    """Largest count of a Binomial(n, rate) event allowed: rate n + 3 sd (a valid bound exceeds
    it with probability < 0.5%): 13.2 at rate 0.05, n = 120 (sd 2.39); 8.1 at rate 0.025 (sd
    1.71)."""
    return rate * n + 3 * np.sqrt(n * rate * (1 - rate))


def _assert_within_error(above, rej_fp, rej_fn, n):
    """The counts of a valid 95% bound over ``n`` audits and of its two constraint tests."""
    # A valid 95% bound is above the truth in at most 5% of audits.
    assert above <= _limit(0.05, n), above
    # Each lower constraint's test (error 2.5%) rejects the grid point at or above the truth in
    # at most 2.5% of audits, whatever the drift of the models' expected rates (Ville); the
    # upper bounds of the mean rates have no fixed mean to be checked against (the
    # per-model rates' expectations change from model to model).
    assert rej_fp <= _limit(0.025, n), rej_fp
    assert rej_fn <= _limit(0.025, n), rej_fn


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("config", CONFIGS, ids=[f"{c[0]}{c[1]:g}-{c[4]}x{c[5]}" for c in CONFIGS])
def test_betting_bound_no_false_accusations(config):
    cfg = dict(zip(KEYS, config, strict=True))
    n = 120
    rng = np.random.default_rng(np.random.SeedSequence(2032, spawn_key=(CONFIGS.index(config),)))
    above = rej_fp = rej_fn = vacuous = 0
    for _ in range(n):
        a = audit(cfg, rng, 1e-5, 0.95, ("betting",))
        assert a["mismatch"] == 0
        b = a["betting"]
        above += b["eps"] > a["truth"]
        rej_fp += b["rej_fp"]
        rej_fn += b["rej_fn"]
        vacuous += b["eps"] == 0
    # The study found 0 of 200 above the truth in each of these.
    _assert_within_error(above, rej_fp, rej_fn, n)
    # the check is not empty: away from eps = 0 the bound is above 0 in most audits
    if cfg["param"] > 0:
        assert vacuous < n / 2, vacuous


# The bound over the most exposed targets (mia.bounds.select_exposed on the reference half,
# POOLED_SELECTED = 8 targets; docs/validation/pooled_bound.md, "The bound over the most exposed
# targets"):
# its closest cases in benchmarks/pooled_validity.py. Laplace eps0 = 1 at alpha 0.1 with 1,024
# models (every target's point on the straight boundary of R; both designs), randomized
# response eps 2 at R's corner, Laplace eps0 = 3 on 10 of 1,000 targets (the others show
# nothing) at alpha 0.01, and 10 Gaussian targets with mu ~ U(2, 4) among 1,000.
SELECTED_CONFIGS = [
    ("laplace", 1.0, 0.0, "independent", 1024, 64, 0.1, None),
    ("laplace", 1.0, 0.0, "balanced", 1024, 64, 0.1, None),
    ("rr", 2.0, 0.0, "balanced", 256, 64, 0.1, None),
    ("laplace", 3.0, 0.0, "independent", 1024, 1000, 0.01, 10),
    ("few", 0.0, 0.25, "balanced", 256, 1000, 0.1, 10),
]


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize(
    "config",
    SELECTED_CONFIGS,
    ids=[f"{c[0]}{c[1]:g}-{c[3][:3]}-{c[4]}x{c[5]}" for c in SELECTED_CONFIGS],
)
def test_selected_bound_no_false_accusations(config):
    cfg = dict(zip((*KEYS, "exposed"), config, strict=True))
    n = 120
    rng = np.random.default_rng(
        np.random.SeedSequence(2033, spawn_key=(SELECTED_CONFIGS.index(config),))
    )
    above = point_above = rej_fp = rej_fn = vacuous = 0
    for _ in range(n):
        a = audit(cfg, rng, 1e-5, 0.95, ("betting",))
        # the library's selection and per-model rates, recomputed from the exact regions
        assert a["mismatch"] == 0 and a["sel_mismatch"] == 0
        assert a["sel_recorded"] and a["sel_n_targets"] == 8
        b = a["sel_betting"]
        above += b["eps"] > a["truth"]
        point_above += a["sel_point"] > a["truth"]
        rej_fp += b["rej_fp"]
        rej_fn += b["rej_fn"]
        vacuous += b["eps"] == 0
    _assert_within_error(above, rej_fp, rej_fn, n)
    # The check can fail: the same criterion applied to the eps of the per-model mean rates
    # (no interval) is broken in these cases where the point sits on the truth; where the truth
    # is the largest of the 10 exposed targets it is far above any bound, so there the bound
    # must instead be informative (above 0 in most audits).
    if cfg["mech"] != "few":
        assert point_above > _limit(0.05, n), point_above
    assert vacuous < n / 2, vacuous


@pytest.mark.slow
@pytest.mark.statistical
def test_blind_attack_on_the_balanced_design_accuses_nothing():
    # An eps = 0 mechanism (every score N(0, 1)), LiRA's balanced design, 1,024 models x 1,000
    # targets; the attack ignores the scores: "member" for a target in every test model iff the
    # reference half has it IN in fewer than half of its models (so it is IN in more than half
    # of the test models). Every target's point is (d_t, 1 - d_t), on FPR + FNR = 1: eps 0. The
    # plain per-model rates weigh a target's FP by its chance to be OUT and its FN by its chance
    # to be IN, both lower for the targets decided "member" / "non-member", so their expected
    # point lies below FPR + FNR = 1 (the old box bound accused in every audit of the benchmark's
    # row 102); the rates with coins weigh both alike.
    cfg = {"mech": "gauss", "param": 0.0, "shift": 0.0, "design": "balanced"}
    cfg |= {"models": 1024, "targets": 1000, "alpha": 0.1, "attack": "blind"}
    n = 60
    rng = np.random.default_rng(np.random.SeedSequence(2034))
    above = sel_above = old_above = rej_fp = rej_fn = 0
    for _ in range(n):
        a = audit(cfg, rng, 1e-5, 0.95, ("betting",))
        assert a["mismatch"] == 0 and a["sel_mismatch"] == 0 and a["truth"] == 0
        # the exact point of every target is on FPR + FNR = 1
        assert a["fpr_true"] + a["fnr_true"] == pytest.approx(1.0, abs=1e-12)
        above += a["betting"]["eps"] > 0
        sel_above += a["sel_betting"]["eps"] > 0
        rej_fp += a["betting"]["rej_fp"]
        rej_fn += a["betting"]["rej_fn"]
        old_above += a["old"]["eps"] > 0
    # the new bounds: a valid 95% bound is above 0 in at most 5% (+ 3 sd: 8.1 of 60)
    assert above <= _limit(0.05, n), above
    assert sel_above <= _limit(0.05, n), sel_above
    assert rej_fp <= _limit(0.025, n) and rej_fn <= _limit(0.025, n), (rej_fp, rej_fn)
    # the check can fail: the old rates' box bound (computed apart, pooled_sim.old_bound of
    # pooled_sim.plain_model_rates) is above 0 in far more than 5% of the same audits
    assert old_above > _limit(0.05, n), old_above
