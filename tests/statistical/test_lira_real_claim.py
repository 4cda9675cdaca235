"""The claim on a real score matrix: trained models on digits with canaries (reduced version of
docs/validation/lira.md, "A real run: digits with canaries"; the full run:
``benchmarks/lira_real_claim.py``).

64 ``mia.MLP`` models on independent random halves of the first 600 digits (18 labels flipped as
canaries), trained with plain SGD and with DP-SGD at a known accountant eps; the default audit of
``benchmarks._support.lira_real.analyse`` (the online test at alpha = 0.1, ``to_evidence()`` at
defaults, ``bdp.estimate_epsilon`` with shorter chains than the default, ``bdp.audit_claim`` at
95%). What must hold whatever the data: the claim's lower end is its frequentist bound, under
DP-SGD never above the accountant's eps; and the model's figures under DP-SGD are those of the
posterior's dominant mode at eps ~ 0. The first chains missed that mode at seed 3 when this
test was written; whether they do depends on where they start, so the miss is now a stand-in
(``tests/_support/mode_miss.py``): the check of the first chains is made as if they sat where
those chains did (eps = 0.395), and must find the mode; the chains sampled again from it give
the figures, whatever the first chains did.
"""

import numpy as np
import pytest

from benchmarks._support.lira_real import accountant_eps, algorithm, analyse, design, train_scores
from tests._support.mode_miss import force_a_miss

MODELS, TARGETS, SEED = 64, 600, 3
CHAIN = {"draws": 1000, "tune": 500, "chains": 2, "cores": 2}
#: where the first chains of seed 3 sat (their 5% quantile of eps): the stand-in's chains
MINOR_EPS = 0.395


def _audits(name, epochs, lr, nm, subsets):
    X, y, canary, keep = design(MODELS, TARGETS, 0.03, SEED)
    algo = algorithm(name, epochs, lr, nm)
    scores, _ = train_scores(algo, X, y, keep, SEED)
    assert np.isfinite(scores).all()
    rows = [analyse(scores, keep, canary, subset=s, seed=SEED, **CHAIN) for s in subsets]
    return algo, keep, rows


def _check_claim(r):
    # the claim's lower end is the frequentist bound, whatever the posterior's lower end
    # (docs/validation/lira.md, "The claim's lower end: the frequentist bound alone")
    assert r["frequentist_lower"] is not None, r["subset"]
    assert r["lower"] == r["frequentist_lower"], r
    # the same quantile, computed twice (np.quantile of the same draws: rounding only)
    assert r["posterior_lower"] == pytest.approx(r["eps_q"][0], rel=1e-12)
    assert r["eps_q"][0] <= r["eps_q"][1] <= r["eps_q"][2]


@pytest.mark.slow
@pytest.mark.statistical
def test_claim_on_trained_models_never_above_the_accountant_eps(monkeypatch):
    # DP-SGD with much noise (noise multiplier 30, 20 epochs, lr 0.05, about 300 examples a
    # model): the PLD accountant's eps at delta = 1e-5 is about 0.3. A false failure needs the
    # claim's frequentist part (which is the claim) to lie above a mechanism's true
    # eps: the per-target bound on effective counts in 0 of 200 audits per design on Laplace
    # matrices (docs/validation/lira.md, "The frequentist companion"), the pooled bound in 0 of
    # 26,800
    # (docs/validation/pooled_bound.md), and here no target's bound is above 0 at all
    # (32 decisions a side at alpha = 0.1 and this much noise show nothing); so a failure means
    # an invalid accountant or claim, not Monte Carlo noise. Power: the first chains' own 5%
    # quantile of all targets lies above the accountant's eps on this run (0.395; 0.61 against
    # 0.16 in the full run of docs/validation/lira.md), so a claim that stated it would fail.
    with monkeypatch.context() as m:
        calls = force_a_miss(m, MINOR_EPS)
        algo, keep, rows = _audits("dpsgd", 20, 0.05, 30.0, ("all", "canaries"))
    eps_lo, eps_hi = accountant_eps(algo, keep, 1e-5, "pld")
    assert 0 < eps_lo <= eps_hi
    for r in rows:
        _check_claim(r)
        assert r["lower"] <= eps_lo, (r["subset"], r["lower"], eps_lo)
        assert r["frequentist_lower"] <= eps_lo, (r["subset"], r["frequentist_lower"], eps_lo)
    post_all = rows[0]["posterior_lower"]
    # all targets: chains that sat where the first chains of seed 3 did (the band model's minor
    # mode, 5% quantile 0.395 against the accountant's 0.295) miss a mode at eps ~ 0: the
    # check finds it from there (the stand-in), the chains are run again from it, and the
    # model's figures are that mode's (docs/validation/lira.md, "A mode the chains missed")
    restart = rows[0]["mode_restart"]
    assert calls[0] == {"stand_in": True, "found": True}, calls
    assert restart is not None and restart["eps"] < 1e-5, restart
    assert MINOR_EPS > eps_lo  # the stand-in's chains would have accused
    assert rows[0]["eps_q"][2] <= eps_lo and not rows[0]["minor_mode"], rows[0]["eps_q"]
    # plain SGD (no guarantee): the claim's rule where the frequentist bound is above 0, on the
    # canaries (asserted, so that the rule is not checked only at 0): the bound pooled over the
    # 18 canaries (1.10-1.12 on the 54 canaries of the full run; docs/validation/lira.md, "The
    # claim with
    # the pooled bound, measured").
    _, _, (r,) = _audits("mlp", 100, 0.01, 0.0, ("canaries",))
    _check_claim(r)
    assert r["frequentist_lower"] > 0
    print(
        f"DP-SGD accountant eps {eps_lo:.3f}-{eps_hi:.3f}, the posterior's 5% quantile (all "
        f"targets) {post_all:.3g} (the first chains' {restart['first_eps_quantiles'][0]:.3g}), "
        f"the claim {rows[0]['lower']:.3f}; MLP canaries: posterior "
        f"{np.round(r['eps_q'], 3)}, claim {r['lower']:.3f}, {r['n_positive']} targets with a "
        f"bound > 0 ({r['n_positive_canaries']} canaries)"
    )
