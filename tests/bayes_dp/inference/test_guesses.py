"""One-run audits (OneRunCounts, likelihood "guesses") as evidence of estimate_epsilon.

The group, its record and the model built from it; the sampler's run on such groups, alone and
beside challenge bases; what the posterior carries (pointwise log likelihood, files, the claim,
the report, ``--json``). The posterior against quadrature: here on one short case, at length in
``tests/statistical/test_guesses_posterior.py``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
from bayes_dp.inference.model import Model

from tests._support.mc_error import check_quantiles
from tests.reference import guesses as ref

BASES = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
RUNS = bdp.OneRunCounts(m=1000, r=[200, 100], v=[150, 90], pairs=[False, True])
SOURCE = {"game": "score matrix", "design": "balanced", "k_grid": [100, 200], "note": None}


def _groups():
    return [
        bdp.Evidence(BASES, name="bases"),
        bdp.Evidence(RUNS, name="game", strength="own", source=SOURCE),
        bdp.Evidence(bdp.OneRunCounts(50, 40, 35), name="small"),
    ]


# -- the group ----------------------------------------------------------------------------------
def test_a_group_of_one_run_audits_is_checked():
    ev = bdp.Evidence(RUNS, source=SOURCE)
    assert ev.likelihood == "guesses" and ev.source == SOURCE
    with pytest.raises(ValueError, match="`source` must be JSON-ready"):
        bdp.Evidence(RUNS, source={"k": np.int64(3)})
    with pytest.raises(ValueError, match="`source` must be JSON-ready"):
        bdp.Evidence(RUNS, source={"k": float("nan")})
    with pytest.raises(TypeError, match="`source` must be a dict or None; found list"):
        bdp.Evidence(RUNS, source=[1, 2])
    with pytest.raises(ValueError, match="`dependence` records how dependent pooled error"):
        bdp.Evidence(RUNS, dependence={"info_ratio": 0.3})
    with pytest.raises(ValueError, match="`reflect=False` is supported by the 'binomial'"):
        bdp.Evidence(RUNS, reflect=False)
    with pytest.raises(ValueError, match="holds no audit"):
        bdp.Evidence(bdp.OneRunCounts(m=[], r=[], v=[]))
    with pytest.raises(TypeError, match="`counts` must be an AttackCounts or a OneRunCounts"):
        bdp.Evidence((1000, 200, 150))
    # a source is a record: it does not make two groups of the same counts different
    assert bdp.Evidence(RUNS, source=SOURCE) == bdp.Evidence(RUNS)


def test_the_model_stacks_bases_and_audits_apart_and_in_group_order():
    m = Model.build(_groups(), delta=1e-5)
    assert m.strengths == ("s", "s_game") and m.var_names == ["eps", "s", "s_game"]
    assert len(m.counts) == 2 and m.base_group.tolist() == [0, 0]
    assert m.guesses["r"].tolist() == [200, 100, 40]
    assert m.guesses["c"].tolist() == [1.0, 2.0, 1.0]
    assert m.guesses["group"].tolist() == [1, 1, 2]
    # the observations, bases first then audits, read in the groups' order
    later = Model.build([_groups()[2], _groups()[0]], delta=1e-5)
    assert later.observation_order().tolist() == [2, 0, 1]
    assert m.observation_order().tolist() == [0, 1, 2, 3, 4]
    only = Model.build(RUNS, delta=1e-5)
    assert only.counts is None and only.base_group.size == 0


def test_the_record_reads_back_with_its_source_and_slack():
    m = Model.build(_groups(), delta=1e-5)
    st = m.settings()
    g = st["groups"][1]
    assert g["kind"] == "one_run" and g["likelihood"] == "guesses" and "counts" not in g
    assert (g["m"], g["r"], g["v"], g["pairs"]) == ([1000, 1000], [200, 100], [150, 90], [0, 1])
    assert g["source"] == SOURCE
    # 2 m delta for bits, 2 m (2 delta) for pairs
    np.testing.assert_allclose(g["delta_slack"], [0.02, 0.04], rtol=1e-12)
    back = Model.from_settings(json.loads(json.dumps(st)))
    assert back == m and back.groups[1].source == SOURCE
    # the Python the report prints makes the same model
    lines, args = m.to_python()
    scope = {"bdp": bdp}
    exec("\n".join(lines), scope)
    assert Model.build(scope["groups"], delta=1e-5) == Model.from_settings(
        {**st, "groups": [{k: v for k, v in g.items() if k != "source"} for g in st["groups"]]}
    )


def test_mhaar_refuses_one_run_groups_by_name():
    with pytest.raises(ValueError, match="'guesses' likelihood of group 'game' is not supported"):
        bdp.estimate_epsilon(_groups(), delta=1e-5, sampler=bdp.MHAAR(), draws=10)


# -- runs ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def joint():
    return bdp.estimate_epsilon(
        _groups(), delta=1e-5, draws=1000, seed=3, check=False, progress=False
    )


def test_a_joint_run_keeps_every_row_in_its_pointwise_log_likelihood(joint):
    ll = joint.log_likelihood["counts"]
    assert ll.shape[2] == 5  # two bases, three audits
    thin = joint.settings["log_likelihood_thin"]
    eps = joint.draws("eps")[:, ::thin]
    s, s_game = joint.draws("s")[:, ::thin], joint.draws("s_game")[:, ::thin]
    # the audits' columns are log P(v | r, eps, s): the quadrature of the binomial
    for col, (r, v, c, strength) in zip(
        (2, 3, 4), ((200, 150, 1.0, s_game), (100, 90, 2.0, s_game), (40, 35, 1.0, s)), strict=True
    ):
        for k in (0, 7, 123):
            want = ref.log_lik_quad(r, v, c, eps[1, k], strength[1, k])
            assert ll[1, k, col] == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_the_file_keeps_the_audits_and_their_source(joint, tmp_path):
    path = joint.to_netcdf(tmp_path / "post.nc")
    back = bdp.load_posterior(path)
    assert back.settings["groups"] == joint.settings["groups"]
    assert back.settings["groups"][1]["source"] == SOURCE
    assert Model.from_settings(back.settings) == Model.build(_groups(), delta=1e-5)
    np.testing.assert_array_equal(back.draws("eps"), joint.draws("eps"))
    np.testing.assert_array_equal(back.log_likelihood["counts"], joint.log_likelihood["counts"])


def test_a_run_of_audits_only_matches_quadrature_short():
    """4 x 5,000 draws against the reference's quadrature (at length: statistical tests)."""
    runs = bdp.OneRunCounts(m=1000, r=[300, 100], v=[240, 70], pairs=[False, True])
    prior = bdp.Prior(eps=bdp.HalfNormal(4.0))
    post = bdp.estimate_epsilon(runs, delta=0.0, prior=prior, draws=5000, seed=11, check=False)
    grid = ref.posterior([(300, 240, 1.0), (100, 70, 2.0)], ("halfnormal", 4.0))
    qs = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    check_quantiles(post.draws("eps"), grid.eps_cdf, qs, label="eps")
    check_quantiles(post.draws("s"), lambda x: grid.s_cdf("s", x), qs, label="s")


def test_the_boundary_strength_is_the_binomial_at_the_bound():
    # s = 1: v ~ Bin(r, e^(c eps) / (1 + e^(c eps))) exactly; one row: a 1-D posterior
    prior = bdp.Prior(eps=bdp.HalfNormal(3.0), s=1.0)
    runs = bdp.OneRunCounts(m=400, r=200, v=140, pairs=True)
    post = bdp.estimate_epsilon(runs, delta=0.0, prior=prior, draws=4000, seed=2, check=False)
    assert post.var_names == ["eps"]
    e = np.linspace(1e-6, 3.0, 30_001)
    dens = np.exp(
        stats.halfnorm.logpdf(e, scale=3.0) + stats.binom.logpmf(140, 200, 1 / (1 + np.exp(-2 * e)))
    )
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(e))])
    cdf /= cdf[-1]
    check_quantiles(
        post.draws("eps"), lambda x: np.interp(x, e, cdf), [0.05, 0.5, 0.95], label="eps"
    )


# -- what the posterior says --------------------------------------------------------------------
def test_the_claim_of_audits_only_is_the_one_run_bound():
    runs = bdp.OneRunCounts(m=1000, r=[300, 100], v=[240, 70])
    post = bdp.estimate_epsilon(runs, delta=1e-6, draws=1000, seed=4, check=False)
    claim = bdp.audit_claim(post)
    bounds = bdp.one_run_epsilon_bound(runs, delta=1e-6, confidence=1 - 0.05 / 2)
    assert claim.frequentist_lower == pytest.approx(bounds.max(), rel=1e-12)
    assert claim.lower == min(claim.frequentist_lower, claim.posterior_lower)
    assert claim.frequentist["n_audits"] == claim.frequentist["n_tests"] == 2
    assert claim.frequentist["group"] == "counts"
    assert "the largest one-run bound of the audits" in claim.sentence
    assert "(240 of 300 guesses right, 1000 canaries)" in claim.sentence
    json.dumps(claim.to_dict())


def test_a_claim_on_bases_and_audits_shares_its_error_among_all_their_tests():
    from bayes_dp.results.claim_counts import count_bound

    strong = bdp.OneRunCounts(m=1000, r=[400, 100], v=[390, 60])  # bound ~3, above the bases'
    groups = [bdp.Evidence(BASES, name="bases"), bdp.Evidence(strong, name="game")]
    post = bdp.estimate_epsilon(groups, delta=1e-5, draws=1000, seed=5, check=False)
    n_tests = 2 * 2 + 2  # the 4 rates of the two bases and the two audits
    level = 1 - 0.05 / n_tests
    claim = bdp.audit_claim(post)
    fb = claim.frequentist
    audits = bdp.one_run_epsilon_bound(strong, delta=1e-5, confidence=level)
    bases = count_bound(post.settings, 0.95, n_tests)
    assert fb["n_tests"] == n_tests and fb["group"] == "game" and fb["row"] == 0
    assert claim.frequentist_lower == pytest.approx(audits.max(), rel=1e-12)
    assert audits.max() > bases["lower"] > 0
    assert fb["count_bound"]["lower"] == pytest.approx(bases["lower"], rel=1e-12)
    # the bases' bound alone (as before) is at level 0.05 / 4: the shared one is smaller
    assert bases["lower"] < count_bound(post.settings, 0.95)["lower"]
    assert "Bonferroni over them and the 4 rates of the bases" in claim.sentence
    assert "beside it, the largest per-base Clopper-Pearson bound" in claim.sentence
    json.dumps(claim.to_dict(), allow_nan=False)


def test_an_audit_of_pairs_is_bounded_at_twice_eps_and_delta():
    pairs = bdp.OneRunCounts(m=1000, r=[100, 50], v=[90, 30], pairs=[True, False])
    post = bdp.estimate_epsilon(pairs, delta=1e-5, draws=300, seed=7, check=False)
    claim = bdp.audit_claim(post)
    level = 1 - 0.05 / 2
    # the pairs audit read as an audit of bits bounds 2 eps, at 2 delta
    twice = bdp.one_run_epsilon_bound(bdp.OneRunCounts(1000, 100, 90), 2e-5, level)[0]
    assert claim.frequentist["row"] == 0 and claim.frequentist["pairs"] is True
    assert claim.frequentist_lower == pytest.approx(twice / 2, rel=1e-9)
    assert "(90 of 100 guesses right, 1000 pairs)" in claim.sentence
    assert "(2 eps, 2 delta)-DP: the bound on 2 eps, halved" in claim.sentence


def test_the_report_and_json_show_the_audits(joint, tmp_path):
    from bayes_dp.cli.result import _result_json

    html = joint.report(tmp_path / "r.html").read_text()
    assert "Group game" in html and "pairs of models (2 ε, 2 δ)" in html
    assert "&quot;design&quot;: &quot;balanced&quot;" in html  # the source record
    assert "a counts file does not hold" in html  # no command line for audits
    out = _result_json(joint, {})
    json.dumps(out, allow_nan=False)
    g = out["groups"][1]
    assert (g["r"], g["v"], g["pairs"], g["source"]) == ([200, 100], [150, 90], [0, 1], SOURCE)
    assert out["claim"]["frequentist"]["n_tests"] == 7


def test_the_report_and_json_of_audits_of_bits(tmp_path):
    from bayes_dp.cli.result import _result_json

    groups = [bdp.Evidence(BASES, name="bases"), bdp.Evidence(RUNS[0], name="game", source=SOURCE)]
    post = bdp.estimate_epsilon(groups, delta=1e-5, draws=300, seed=6, check=False)
    html = post.report(tmp_path / "r.html").read_text()
    assert "Group game" in html and "membership bits (ε, δ)" in html
    assert "&quot;design&quot;: &quot;balanced&quot;" in html
    assert "a counts file does not hold" in html
    out = _result_json(post, {})
    json.dumps(out, allow_nan=False)
    assert out["groups"][1]["v"] == [150] and out["groups"][1]["source"] == SOURCE
    assert out["groups"][0] == {"name": "bases", "likelihood": "binomial", "strength": "shared"}


def test_a_pointwise_log_likelihood_sums_to_the_model_at_each_draw():
    # one audit alone: the log likelihood is the kernel's at each draw, and az.loo runs on it
    runs = bdp.OneRunCounts(m=200, r=[100, 60, 40], v=[70, 45, 20])
    post = bdp.estimate_epsilon(runs, delta=0.0, draws=500, seed=1, check=False)
    ll = post.log_likelihood["counts"]
    assert ll.shape == (4, 500, 3) and np.isfinite(ll).all()
    e, s = post.draws("eps")[0, 10], post.draws("s")[0, 10]
    for j, (r, v) in enumerate(((100, 70), (60, 45), (40, 20))):
        assert ll[0, 10, j] == pytest.approx(ref.log_lik_quad(r, v, 1.0, e, s), rel=1e-9)
    assert math.isfinite(float(np.sum(ll)))
