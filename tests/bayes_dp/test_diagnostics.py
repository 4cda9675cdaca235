"""bayes_dp.results.diagnostics: one owner of the convergence checks, their thresholds and
wording."""

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.report import plain_warnings
from bayes_dp.results import diagnostics
from bayes_dp.results.diagnostics import ESS_PER_CHAIN_MIN, RHAT_MAX, findings
from bayes_dp.results.posterior import Posterior


def _post(diag, *, chains=4, accept=0.3, settings=None):
    """A posterior whose diagnostics are ``diag`` (so the thresholds can be probed exactly)."""
    draws = {v: np.zeros((chains, 50)) for v in diag}
    stats = {"accept_joint": np.full((chains, 50), accept)}
    post = Posterior(draws, stats, settings or {})
    post.diagnostics = lambda: diag  # instance attribute: the checks read it
    return post


def _ok(**kw):
    return {"r_hat": 1.0, "ess_bulk": 5000.0, "ess_tail": 5000.0, **kw}


def test_thresholds_are_inclusive_and_per_chain():
    per4 = ESS_PER_CHAIN_MIN * 4
    assert findings(_post({"eps": _ok(r_hat=RHAT_MAX, ess_bulk=per4, ess_tail=per4)})) == []
    found = findings(
        _post({"eps": _ok(r_hat=RHAT_MAX + 1e-4), "s": _ok(ess_bulk=per4 - 1, ess_tail=np.nan)})
    )
    assert [(f.kind, f.var) for f in found] == [
        ("r_hat", "eps"),
        ("ess_bulk", "s"),
        ("ess_tail", "s"),  # NaN is a problem, not a pass
    ]
    assert found[0].limit == RHAT_MAX and found[1].limit == per4 and found[1].value == per4 - 1
    assert all(f.convergence for f in found)
    assert found[0].message.startswith(f"r_hat 1.010 for eps (should be <= {RHAT_MAX})")
    assert f"ESS bulk {per4 - 1} for s is below {per4} (100 per chain)" in found[1].message
    # two chains: the bar halves
    assert findings(_post({"eps": _ok(ess_bulk=200.0, ess_tail=200.0)}, chains=2)) == []


def test_acceptance_and_fixed_variables():
    found = findings(_post({"eps": _ok()}, accept=0.05, settings={"fixed": {"s": 0.9}}))
    assert [(f.kind, f.var, f.convergence) for f in found] == [
        ("acceptance", "joint", False),
        ("fixed", "s", False),
    ]
    assert found[0].limit == diagnostics.ACCEPT_RANGE[0]
    assert "outside [0.1, 0.6]" in found[0].message and "fixed at 0.9" in found[1].message


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        ({"stop_reason": "max_time", "max_time": 60.0}, "because its time budget of 60 s ran out"),
        ({"stop_reason": "max_draws"}, "because it reached the largest run the sampler makes"),
    ],
)
def test_a_run_that_stopped_early_comes_first(settings, why):
    diag = {"eps": _ok(ess_tail=1500.0), "s": _ok(ess_bulk=900.0)}
    post = _post(diag, settings={"converged": False, **settings})
    found = findings(post)
    assert [f.kind for f in found] == ["not_converged"]
    f = found[0]
    assert f.var == "s" and f.value == 50  # the variable furthest from the rule, the draws
    assert f.message.startswith("Not converged: the run stopped after 50 draws per chain " + why)
    assert diagnostics.stopping_rule() in f.message and "not reliable" in f.message
    assert "(s: r_hat 1.000, ESS bulk 900, tail 5000)" in f.message


def test_everything_that_reports_formats_the_same_findings():
    rng = np.random.default_rng(0)
    stuck = np.stack([rng.normal(0, 1, 200), rng.normal(3, 1, 200)])  # chains disagree
    post = Posterior(
        {"eps": stuck}, {"accept_joint": np.full((2, 200), 0.05)}, {"fixed": {"s": 0.6}}
    )
    found = findings(post)
    assert plain_warnings(post) == [f.message for f in found]
    with pytest.warns(bdp.ConvergenceWarning) as rec:
        msgs = post.check()
    conv = [f for f in found if f.convergence]
    assert msgs == [f.message for f in conv] == [str(w.message) for w in rec]
    assert [w.message.var for w in rec] == [f.var for f in conv]
    assert rec[0].message.r_hat == post.diagnostics()["eps"]["r_hat"]


def test_not_converged_warning_of_estimate_uses_the_finding():
    from bayes_dp.inference.estimate import _warn_not_converged

    post = _post(
        {"eps": _ok(ess_bulk=900.0)}, settings={"converged": False, "stop_reason": "max_time"}
    )
    with pytest.warns(bdp.ConvergenceWarning) as rec:
        _warn_not_converged(post, stacklevel=1)
    assert [str(w.message) for w in rec] == [findings(post)[0].message]
    assert rec[0].message.var == "eps" and rec[0].message.ess_bulk == 900.0


def test_findings_needs_a_posterior():
    with pytest.raises(TypeError, match="`posterior`"):
        findings({"eps": 1})
