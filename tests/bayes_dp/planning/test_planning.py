"""Tests of ``bayes_dp.plan_audit`` (audit planning on grid posteriors).

References independent of the planner's code: the quadrature posterior of
``tests/reference/``, a closed form of the likelihood of a perfect attack (zero errors)
with delta = 0 (derived in ``docs/validation/planning.md``), and, in the slow test, full
``estimate_epsilon`` runs on the same simulated audits.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import integrate, special, stats

import bayes_dp as bdp
from bayes_dp.planning.core import Design, grid_posterior

from benchmarks._support.plan_grid_check import grid_errors
from tests import reference as ref

STRONG = bdp.AttackCounts(
    fp=[40, 50, 60, 100, 100, 110, 120, 200, 200, 200],
    n_neg=1000,
    fn=[250, 200, 150, 100, 120, 100, 100, 80, 70, 60],
    n_pos=1000,
)


# --------------------------------------------------------------------------- grid posterior


@pytest.mark.parametrize(
    ("counts", "prior", "ref_s"),
    [
        # one canary-style base, s free: a broad posterior with a sharp lower cliff
        (bdp.AttackCounts(fp=43, n_neg=1000, fn=204, n_pos=1000), bdp.Prior(), ("beta", 1, 1)),
        # weak attacks on small bases
        (
            bdp.AttackCounts(fp=[30, 41, 12], n_neg=100, fn=[45, 38, 70], n_pos=100),
            bdp.Prior(),
            ("beta", 1, 1),
        ),
        # s fixed: a one-dimensional grid
        (
            bdp.AttackCounts(fp=[40, 50, 60], n_neg=1000, fn=[250, 200, 150], n_pos=1000),
            bdp.Prior(s=0.9),
            ("fixed", 0.9),
        ),
    ],
)
def test_grid_posterior_matches_quadrature_reference(counts, prior, ref_s):
    g = grid_posterior(counts, 1e-5, prior)
    r = ref.posterior_grid(
        (counts.fp, counts.n_neg, counts.fn, counts.n_pos),
        1e-5,
        eps_prior=("halfnormal", 10.0),
        s_prior=ref_s,
        zoom=None,
    )
    q = np.array([0.05, 0.5, 0.95])
    # the reference CDF at the grid's quantiles, in probability points (the bar of the
    # sampler's stress grid is 1.5)
    err = 100 * (r.eps_cdf(g.quantile(q)) - q)
    assert np.max(np.abs(err)) < 1.5, err


def test_grid_posterior_one_base_of_ten_thousand():
    # issue 27: one base of N = 10,000 (the canary example's last row). In (log(s eps), logit s)
    # the grid missed the sharp edge eps >= 3.2 as s -> 0 and the thin wedge as s -> 1: its
    # quantiles were off by 11.8 (eps) and 15.7 (s) probability points. Now (log eps, logit s)
    # and the larger-integral of two zooms (docs/validation/planning.md).
    err_eps, err_s = grid_errors(bdp.AttackCounts(fp=390, n_neg=10_000, fn=1312, n_pos=10_000))
    assert np.max(np.abs(err_eps)) < 1.5, err_eps
    assert np.max(np.abs(err_s)) < 1.5, err_s


#: the design CI's statistical stage runs: three bases of N = 1,000 and a weak strength
#: (s = 0.05, the long ridge in eps), a reference of seconds
CI_DESIGN = (3, 1000, 3.0, 0.05)
DESIGN_GRID = [
    pytest.param(
        bases,
        n,
        eps,
        s,
        marks=[pytest.mark.statistical] if (bases, n, eps, s) == CI_DESIGN else [],
        id=f"{bases}-{n}-{eps}-{s}",
    )
    for bases in (1, 3, 20)
    for n in (100, 1000, 10_000)
    for eps, s in ((4.0, 0.9), (3.0, 0.05), (2.0, 0.5))
]


@pytest.mark.slow
@pytest.mark.parametrize(("bases", "n", "eps", "s"), DESIGN_GRID)
def test_grid_posterior_over_designs(bases, n, eps, s):
    # one simulated audit (seed 1) per design and truth, against the quadrature reference
    # (the 20-base references take 0.5-4 min at N <= 1,000 and ~11 min at N = 10,000)
    counts, _, _ = bdp.simulate.simulate_counts(eps, s, 1e-5, [n] * bases, [n] * bases, seed=1)
    err_eps, err_s = grid_errors(counts)
    assert np.max(np.abs(err_eps)) < 1.5, err_eps
    assert np.max(np.abs(err_s)) < 1.5, err_s


def test_grid_posterior_strong_attack_table():
    # the paper's strong-attack data: a narrow ridge in (log(s eps), logit s)
    g = grid_posterior(STRONG, 1e-5, bdp.Prior())
    # quadrature reference (tests/reference/, 12 s, so its values are pinned here)
    np.testing.assert_allclose(g.quantile([0.05, 0.5, 0.95]), [2.715, 2.96, 4.07], rtol=0.02)


# --------------------------------------------------------------------------- ceiling: closed form


def _log_inc_beta(a, b, x):
    """log of the incomplete beta integral B(x; a, b), x <= 1/2 (no underflow)."""
    v = special.betainc(a, b, x)
    if v > 1e-250:
        return np.log(v) + special.betaln(a, b)
    # B(x; a, b) = x^a (1 - x)^b / a * 2F1(a + b, 1; a + 1; x); the series' term ratio
    # (a + b + j) x / (a + 1 + j) is < 1 here (the underflow means x << a / (a + b))
    total, term, j = 1.0, 1.0, 0
    while term > 1e-17 * total:
        term *= (a + b + j) * x / (a + 1 + j)
        total += term
        j += 1
    return a * np.log(x) + b * np.log1p(-x) - np.log(a) + np.log(total)


def _log_mass_perfect(t, n0, n1):
    """log of the integral of (1 - a)^n0 (1 - b)^n1 over R(t, 0) (docs/validation/planning.md)."""
    k = 1.0 / (1.0 + np.exp(t))
    b2 = special.betaln(n0 + 1, n1 + 2)
    top = np.logaddexp(
        (n1 + 1) * t + _log_inc_beta(n1 + 2, n0 + 1, k),
        (n0 + 1) * t + _log_inc_beta(n0 + 1, n1 + 2, k),
    )
    corner = np.logaddexp(
        -(n0 + 1) * t + np.log(special.betainc(n0 + 1, n1 + 2, 1 - k)) + b2,
        -(n1 + 1) * t + np.log(special.betaincc(n0 + 1, n1 + 2, k)) + b2,
    )
    return top + np.log1p(-np.exp(corner - top)) - np.log(n1 + 1)


def _log_lik_perfect(eps, s, n0, n1, bases):
    """log P(all counts 0 | eps, s) at delta = 0: (mass(R(eps)) - mass(R(s eps))) / |R_s|."""
    if s == 0.0:
        lm, area = _log_mass_perfect(eps, n0, n1), np.tanh(eps / 2)
    else:
        a, b = _log_mass_perfect(eps, n0, n1), _log_mass_perfect(s * eps, n0, n1)
        lm = a + np.log1p(-np.exp(b - a))
        area = np.tanh(eps / 2) - np.tanh(s * eps / 2)
    return bases * (lm - np.log(area))


def test_closed_form_of_the_perfect_attack_mass():
    # the closed form against brute-force 2-D quadrature over R(t, 0)
    for t, n0, n1 in [(1.0, 3, 5), (2.5, 10, 4), (4.0, 20, 30)]:
        c = np.exp(t)

        def lower(a, c=c):
            return min(1.0, max(0.0, 1 - c * a, (1 - a) / c))

        def upper(a, c=c):
            return 1.0 - min(1.0, max(0.0, 1 - c * (1 - a), a / c))

        brute = integrate.dblquad(
            lambda b, a, n0=n0, n1=n1: (1 - a) ** n0 * (1 - b) ** n1,
            0,
            1,
            lower,
            upper,
            epsabs=1e-14,
            epsrel=1e-10,
        )[0]
        assert np.exp(_log_mass_perfect(t, n0, n1)) == pytest.approx(brute, rel=1e-8)


def _ceiling_closed_form(n, bases, scale, s, q=0.05):
    """The q quantile of eps after zero errors (s fixed), by 1-D quadrature of the closed form."""
    eps = np.linspace(1e-3, 60.0, 6000)
    ll = np.array([_log_lik_perfect(e, s, n, n, bases) for e in eps])
    lp = ll + stats.halfnorm(scale=scale).logpdf(eps)
    w = np.exp(lp - lp.max())
    cdf = integrate.cumulative_trapezoid(w, eps, initial=0)
    return float(np.interp(q, cdf / cdf[-1], eps))


@pytest.mark.parametrize(
    ("n", "bases", "scale", "s"),
    [(100, 1, 10.0, 0.0), (1000, 1, 10.0, 0.0), (50, 5, 5.0, 0.5), (300, 3, 10.0, 0.3)],
)
def test_ceiling_matches_closed_form(n, bases, scale, s):
    prior = bdp.Prior(eps=bdp.HalfNormal(scale), s=s)
    plan = bdp.plan_audit(
        {"eps": 2.0, "s": 0.5}, [{"bases": bases, "n": n}], delta=0.0, prior=prior, reps=1, seed=0
    )
    expected = _ceiling_closed_form(n, bases, scale, s)
    assert plan.ceiling[0] == pytest.approx(expected, rel=0.01)


def test_ceiling_with_free_strength_matches_quadrature_reference():
    # s ~ Beta(1, 1): the closed form would need I(eps) - I(s eps) as s -> 1 (cancellation),
    # so the reference here is tests/reference/
    plan = bdp.plan_audit({"eps": 2.0, "s": 0.5}, {"bases": 2, "n": 200}, delta=1e-5, reps=1)
    zeros = ([0, 0], [200, 200], [0, 0], [200, 200])
    r = ref.posterior_grid(zeros, 1e-5, eps_prior=("halfnormal", 10.0), zoom=None)
    assert 100 * abs(r.eps_cdf(plan.ceiling[0]) - 0.05) < 1.0


# --------------------------------------------------------------------------- plan_audit


def test_plan_audit_table_power_and_reproducibility():
    designs = [{"bases": 2, "n": 50}, {"bases": 2, "n": 500, "label": "big"}]
    kw = dict(delta=1e-5, claim=1.0, reps=4, seed=3)
    plan = bdp.plan_audit({"eps": 3.0, "s": 0.8}, designs, **kw, cores=2)
    again = bdp.plan_audit({"eps": 3.0, "s": 0.8}, designs, **kw, cores=1)
    np.testing.assert_array_equal(plan.lo, again.lo)  # same seed, any number of threads
    np.testing.assert_array_equal(plan.hi, again.hi)
    t = plan.table
    assert list(t.label) == ["2 x 50", "big"]
    assert t.failed.tolist() == [0, 0]
    assert np.all(plan.lo < plan.hi)
    # the table's summaries are those of the per-audit intervals
    np.testing.assert_allclose(t.lo_median, np.median(plan.lo, axis=1))
    np.testing.assert_allclose(t.width_p90, np.quantile(plan.hi - plan.lo, 0.9, axis=1))
    np.testing.assert_allclose(t.power, np.mean(plan.p_above >= 0.95, axis=1))
    # more models per base: narrower intervals (true eps 3, so they shrink towards it)
    assert t.width_median[1] < t.width_median[0]
    # a perfect attack shows more than any simulated one
    assert np.all(plan.lo <= plan.ceiling[:, None] * 1.0001)
    json.dumps(plan.to_dict(), allow_nan=False)
    assert "big" in str(plan)
    assert plan.to_pandas().loc["big", "bases"] == 2


def test_claim_above_the_ceiling_is_never_detected():
    plan = bdp.plan_audit(
        {"eps": 8.0, "s": 0.95}, {"bases": 1, "n": 50}, delta=1e-5, claim=1.0, reps=3, seed=0
    )
    high = bdp.plan_audit(
        {"eps": 8.0, "s": 0.95},
        {"bases": 1, "n": 50},
        delta=1e-5,
        claim=1.01 * plan.ceiling[0],
        reps=3,
        seed=0,
    )
    assert high.power[0] == 0.0
    assert np.all(high.p_above < 0.95)


def test_truth_as_a_distribution():
    calls = []

    def truth(rng):
        calls.append(1)
        return {"eps": float(rng.uniform(1, 4)), "s": 0.7}

    plan = bdp.plan_audit(truth, {"bases": 1, "n": 100}, delta=1e-5, reps=4, seed=1)
    assert len(calls) == 4 and np.unique(plan.truths[0, :, 0]).size == 4
    listed = bdp.plan_audit(
        [{"eps": 1.0, "s": 0.5}, {"eps": 3.0, "s": 0.5}],
        {"bases": 1, "n": 100},
        delta=1e-5,
        reps=8,
        seed=1,
    )
    assert set(listed.truths[0, :, 0]) <= {1.0, 3.0}


def test_plot(tmp_path):
    import matplotlib.pyplot as plt

    plan = bdp.plan_audit(
        {"eps": 3.0, "s": 0.8},
        [{"bases": 1, "n": 100}, {"bases": 1, "n": 300}],
        delta=1e-5,
        claim=1.0,
        reps=2,
        seed=0,
    )
    ax = plan.plot()
    assert ax.get_xscale() == "log" and len(ax.figure.axes) == 2  # width and power axes
    ax.figure.savefig(tmp_path / "plan.png")
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="`x` must be one of"):
        plan.plot(x="models")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(truth={"eps": 2.0}), ValueError, "needs the key .s. and one of"),
        (dict(truth={"eps": 2.0, "s": 0.5, "tau": 0.1}), ValueError, "not a parameter of the"),
        (dict(truth={"eps": -1.0, "s": 0.5}), ValueError, r"`truth\['eps'\]` must be > 0"),
        (dict(truth={"eps": 1.0, "s": 1.0}), ValueError, r"`truth\['s'\]` must be < 1"),
        (dict(truth=[{"eps": 1.0, "s": 0.5}, {"eps": 1.0}]), ValueError, r"`truth\[1\]` needs"),
        (dict(truth="eps=2"), TypeError, "`truth` must be a dict"),
        (dict(truth=[]), TypeError, "`truth` must be a dict"),
        (dict(truth=lambda rng: 3.0), TypeError, r"`truth\(rng\)` must be a dict"),
        (dict(designs=[]), ValueError, "at least one design"),
        (dict(designs=[{"bases": 2}]), ValueError, "needs `n`"),
        (dict(designs=[{"n": 10, "models": 3}]), ValueError, "unknown design key"),
        (dict(designs=[{"n": 10, "n_neg": 3}]), ValueError, "either `n` or"),
        (dict(designs=[{"n": 0}]), ValueError, "`n_neg` must be >= 1; found 0"),
        (dict(designs=[{"n": 10, "level": 1.5}]), ValueError, "`level` must be < 1"),
        (dict(designs=[{"n": 10}, {"n": 10}]), ValueError, "labels must be distinct"),
        (dict(designs="10 x 100"), TypeError, "`designs` must be a list"),
        (dict(claim=0.0), ValueError, "`claim` must be > 0"),
        (dict(reps=0), ValueError, "`reps` must be >= 1; found 0"),
        (dict(confidence=1.0), ValueError, "`confidence` must be < 1"),
        (dict(delta=1.0), ValueError, "`delta` must be < 1"),
        (dict(prior="flat"), TypeError, "`prior` must be a bayes_dp.Prior"),
        (dict(seed="x"), TypeError, "`seed` must be None"),
    ],
)
def test_input_validation(kwargs, error, match):
    args = dict(truth={"eps": 2.0, "s": 0.5}, designs=[{"n": 10}], delta=1e-5, reps=1)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        bdp.plan_audit(args.pop("truth"), args.pop("designs"), **args)


def test_design_labels_and_sizes():
    assert Design(bases=3, n_neg=100, n_pos=100).label == "3 x 100"
    assert Design(bases=1, n_neg=100, n_pos=20).label == "1 x 100/20"
    assert Design.from_dict({"n": 5}).bases == 1


# --------------------------------------------------------------------------- command line


def test_cli_plan_json(capsys, tmp_path):
    from bayes_dp.cli import main

    fig = tmp_path / "plan.png"
    argv = ["plan", "--eps", "3", "--s", "0.8", "--delta", "1e-5", "--bases", "1", "2"]
    argv += ["--n", "100", "--claim", "1", "--reps", "2", "--json", "--plot", str(fig)]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert [d["label"] for d in out["designs"]] == ["1 x 100", "2 x 100"]
    assert out["exit_status"] == 0 and out["claim"] == 1.0 and fig.exists()
    # the same plan from Python
    plan = bdp.plan_audit(
        {"eps": 3, "s": 0.8},
        [{"bases": 1, "n": 100}, {"bases": 2, "n": 100}],
        delta=1e-5,
        claim=1.0,
        reps=2,
        seed=0,
    )
    assert [d["lo_median"] for d in out["designs"]] == pytest.approx(plan.table.lo_median)


def test_cli_plan_errors(capsys):
    """Out-of-range options are usage errors (exit 2) naming the option, before any work."""
    from bayes_dp.cli import main

    assert main(["plan", "--eps", "3", "--s", "1.5", "--delta", "1e-5", "--n", "10"]) == 2
    assert "argument --s: must be in [0, 1), found '1.5'" in capsys.readouterr().err
    assert main(["plan", "--eps", "3", "--s", "0.5", "--delta", "1e-5", "--n", "0"]) == 2
    assert "argument --n: must be >= 1, found '0'" in capsys.readouterr().err
    assert main(["plan", "--eps", "3", "--delta", "1e-5", "--n", "10"]) == 2  # no --s


# --------------------------------------------------------------------------- full runs (slow)

#: (truth, design): the paper's setting, small weak bases, one canary-style base.
FULL_RUN_CASES = [
    ({"eps": 3.0, "s": 0.7}, {"bases": 10, "n": 1000}),
    ({"eps": 1.0, "s": 0.3}, {"bases": 3, "n": 100}),
    ({"eps": 4.0, "s": 0.9}, {"bases": 1, "n": 1000}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("truth", "design"), FULL_RUN_CASES)
def test_plan_matches_full_runs(truth, design):
    """The plan's interval ends agree with full estimate_epsilon runs on the same audits.

    Per audit: the full run's ECDF at the plan's ends is within 2 probability points of 5% and
    95%. Per design: the plan's median, 10% and 90% points of each end differ from the full
    runs' by less than 3 bootstrap sds (over audits) of the full runs' statistic.
    """
    plan = bdp.plan_audit(truth, design, delta=1e-5, reps=15, seed=11)
    check_against_full_runs(plan, lambda counts, r: counts)


def check_against_full_runs(plan, evidence):
    """Judge ``plan`` (one design) against full runs on its audits (``evidence(counts, r)``)."""
    reps = plan.reps
    full = np.empty((reps, 2))
    cdf_err = np.empty((reps, 2))
    for r, counts in enumerate(plan.counts[0]):
        post = bdp.estimate_epsilon(
            evidence(counts, r), delta=plan.delta, seed=r, progress=False, check=False
        )
        assert post.converged
        d = post.draws("eps").ravel()
        full[r] = post.interval(0.9)
        cdf_err[r] = [np.mean(d <= plan.lo[0, r]) - 0.05, np.mean(d <= plan.hi[0, r]) - 0.95]
    rng = np.random.default_rng(0)
    boot = rng.integers(reps, size=(2000, reps))
    lines = [f"{plan.designs[0].label}: worst ECDF error {100 * np.abs(cdf_err).max():.2f} pp"]
    for j, (name, grid) in enumerate((("lo", plan.lo[0]), ("hi", plan.hi[0]))):
        for q in (0.1, 0.5, 0.9):
            stat_full = np.quantile(full[:, j], q)
            sd = np.quantile(full[boot, j], q, axis=1).std()
            diff = np.quantile(grid, q) - stat_full
            lines.append(f"{name} q{q:g}: plan-full {diff:+.4f} (bootstrap sd {sd:.4f})")
            assert abs(diff) <= 3 * sd + 1e-9, lines[-1]
    print("\n".join(lines))
    assert np.abs(cdf_err).max() < 0.02, lines[0]


def test_example_runs(run_script, tmp_path):
    out = run_script("examples/plan_audit.py", "--reps", "2", "--out", str(tmp_path)).stdout
    assert "== shadow" in out and "== canary" in out and "10 x 3000" in out
    assert (tmp_path / "plan_shadow.png").exists() and (tmp_path / "plan_canary.png").exists()
