"""The model as a value (bayes_dp.inference.model.Model), and runs that are repeated from its
record."""

import json
import shlex

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.inference.model import Model

A = bdp.AttackCounts([40, 50, 45], 1000, [250, 200, 230], 1000)
B = bdp.AttackCounts([100, 110], 1000, [100, 90], 1000)
C = bdp.AttackCounts([60, 80, 70, 65], 500, [90, 70, 85, 100], 500)
FAST = dict(chains=2, draws=150, tune=100, check=False, progress=False)
#: the entries of post.settings that describe the run itself, not how long it took
OUTCOME = {"seconds", "versions"}


def _groups():
    """Several groups: two sharing s, a bivariate-normal one with its own s and a fixed rho."""
    return [
        bdp.Evidence(A, name="a"),
        bdp.Evidence(B, name="b"),
        bdp.Evidence(C, likelihood="bivariate_normal", name="c", strength="own", fix={"rho": 0.04}),
    ]


PRIOR = bdp.Prior(eps=bdp.LogNormal(1.0, 0.7), s=bdp.Beta(2.0, 3.0), tau=bdp.Beta(1.0, 5.0))


def test_build_strengths_parameters_and_fixed_values():
    m = Model.build(
        [*_groups(), bdp.Evidence(C, likelihood="beta_binomial", name="d", fix={"tau": 0.02})],
        delta=1e-6,
        prior=PRIOR,
    )
    assert m.strengths == ("s", "s_c")  # d shares s with a and b
    assert m.group_strength == (0, 0, 1, 0)
    assert m.var_names == ["eps", "s", "s_c", "tau_c"]
    assert m.fixed == {"rho_c": 0.04, "tau_d": 0.02}
    assert m.tau_free == (False, False, True, False)
    assert m.rho_free == (False, False, False, False)
    assert m.tau_start == (0.0, 0.0, 0.05, 0.02)
    kg = m.kernel_groups()
    from samplers.model import codes

    assert kg["lik"].tolist() == [
        codes.LIK_BINOMIAL,
        codes.LIK_BINOMIAL,
        codes.LIK_BIVARIATE_NORMAL,
        codes.LIK_BETA_BINOMIAL,
    ]
    assert m.base_group.tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]
    assert len(m.counts) == 13
    # fixed strengths are recorded per variable
    m1 = Model.build(_groups(), delta=1e-6, prior=bdp.Prior(s=0.6))
    assert m1.var_names == ["eps", "tau_c"]
    assert m1.fixed == {"s": 0.6, "s_c": 0.6, "rho_c": 0.04}
    with pytest.raises(AttributeError):
        m.delta = 0.1  # frozen


def test_a_fixed_rho_moves_the_starting_tau_to_where_it_is_admissible():
    """rho = 0.1 needs rho_max(tau) = (1 + 499 tau) / 500 > 0.1, i.e. tau > 0.098 (N = 500)."""
    ev = bdp.Evidence(C, likelihood="bivariate_normal", name="c", fix={"rho": 0.1})
    m = Model.build(ev, delta=1e-5)
    (tau0,) = m.tau_start
    assert 0.098 < tau0 < 0.1
    # the exact sampler starts there too (it used to start tau at 0.05, where the posterior is
    # zero, and gave up)
    post = bdp.estimate_epsilon(ev, delta=1e-5, seed=0, **FAST)
    tau = post.draws("tau_c")
    assert np.all((1 + 499 * tau) / 500 > 0.1)
    with pytest.raises(ValueError, match="admissible"):
        Model.build(
            bdp.Evidence(C, likelihood="bivariate_normal", fix={"rho": 0.1, "tau": 0.05}),
            delta=1e-5,
        )


@pytest.mark.parametrize(
    "counts, prior, method, words",
    [
        (A, bdp.Prior(s=1.0), "mhaar", ["s = 1", "sampler=bdp.Exact()", "bdp.MHAAR()"]),
        (
            bdp.Evidence(C, likelihood="beta_binomial", name="bb"),
            bdp.Prior(s=1.0),
            "exact",
            ["binomial evidence only", "['bb']"],
        ),
    ],
)
def test_check_method(counts, prior, method, words):
    m = Model.build(counts, delta=1e-5, prior=prior)
    with pytest.raises(ValueError) as info:
        m.check_method(method)
    assert all(w in str(info.value) for w in words)
    with pytest.raises(ValueError) as info:
        sampler = bdp.MHAAR() if method == "mhaar" else bdp.Exact()
        bdp.estimate_epsilon(counts, delta=1e-5, prior=prior, sampler=sampler)
    assert all(w in str(info.value) for w in words)


def test_bad_inputs_name_the_argument():
    with pytest.raises(TypeError, match="`prior` must be a bayes_dp.Prior; found str"):
        Model.build(A, delta=1e-5, prior="flat")
    with pytest.raises(ValueError, match="delta"):
        Model.build(A, delta=1.5)
    with pytest.raises(ValueError, match=r"\['a'\] repeated"):
        Model.build([bdp.Evidence(A, name="a"), bdp.Evidence(B, name="a")], delta=1e-5)
    with pytest.raises(ValueError, match="cannot be read back"):
        Model.from_settings({"delta": 1e-5, "prior": "__import__('os')", "groups": []})
    with pytest.raises(ValueError, match="no evidence groups"):
        Model.from_settings({"delta": 1e-5, "fixed": {}})


def test_settings_round_trip_and_old_records():
    m = Model.build(_groups(), delta=1e-6, prior=PRIOR)
    st = json.loads(json.dumps(m.settings()))  # what a netCDF file holds
    assert Model.from_settings(st) == m
    assert Model.from_settings(st).settings() == m.settings()
    # records of earlier versions: no fix, strength or likelihood entries, default prior
    old = {
        "delta": 1e-5,
        "prior": "Prior(eps=HalfNormal(scale=10.0), s=Beta(a=1.0, b=1.0))",
        "groups": [{"name": "counts", "counts": A.to_dict()}],
    }
    m_old = Model.from_settings(old)
    assert m_old == Model.build(A, delta=1e-5)
    assert m_old != m


def _same_run(a, b):
    """Equal settings (but the time taken and versions) and bit-identical draws."""
    sa = {k: v for k, v in a.settings.items() if k not in OUTCOME}
    sb = {k: v for k, v in b.settings.items() if k not in OUTCOME}
    assert sa == sb
    assert a.var_names == b.var_names
    for v in a.var_names:
        np.testing.assert_array_equal(a.draws(v), b.draws(v))


@pytest.mark.parametrize(
    "sampler, extra",
    [
        (bdp.Exact(target_accept=0.35), dict(log_likelihood=False)),
        (bdp.MHAAR(thin=3, n_aux=8, aux_band_weight=0.1, aux_proposal="likelihood"), {}),
    ],
)
def test_reproduce_snippet_repeats_the_run(tmp_path, sampler, extra):
    """Fixed rho, custom priors, several groups, a bivariate-normal group, delta: the report's
    Python snippet, run as it stands, gives the same settings and draws, also when written from
    a posterior read back from its file."""
    from bayes_dp.report import _cli_reproduction, _reproduce_snippet

    post = bdp.estimate_epsilon(
        _groups(), delta=1e-6, prior=PRIOR, sampler=sampler, seed=3, **FAST, **extra
    )
    assert post.settings["fixed"] == {"rho_c": 0.04}
    post.to_netcdf(tmp_path / "p.nc")
    back = bdp.load_posterior(tmp_path / "p.nc")
    snippet = _reproduce_snippet(back.settings)
    assert snippet == _reproduce_snippet(post.settings)
    assert "fix={'rho': 0.04}" in snippet and "delta=1e-06" in snippet
    ns = {}
    exec(snippet.replace("seed=", "check=False, progress=False, seed="), ns)
    _same_run(post, ns["post"])
    assert (post.log_likelihood is None) == (ns["post"].log_likelihood is None)
    # the command line cannot express these runs, and says why
    why = _cli_reproduction(post.settings)
    assert isinstance(why, str)
    assert "fixed tau or rho" in why and "log-normal prior" in why
    assert "a strength shared by several groups" in why


def test_reproduce_after_an_automatic_length_run():
    from bayes_dp.report import _reproduce_snippet

    post = bdp.estimate_epsilon(
        B, delta=1e-5, prior=bdp.Prior(s=0.5), seed=2, chains=2, tune=200, draws=None,
        check=False, progress=False,
    )  # fmt: skip
    assert post.settings["draws_requested"] is None and post.converged
    snippet = _reproduce_snippet(post.settings)
    assert f"draws={post.n_draws}" in snippet and "asking for that length" in snippet
    ns = {}
    exec(snippet.replace("seed=", "check=False, progress=False, seed="), ns)
    for v in post.var_names:
        np.testing.assert_array_equal(post.draws(v), ns["post"].draws(v))


def test_cli_reproduction_repeats_a_python_run(tmp_path, capsys):
    """A run the command line can express (first group shared, later ones own, a
    bivariate-normal group, delta, a Beta prior of s and the eps scale): its command on its
    counts.csv gives the same model, settings and draws."""
    from bayes_dp.cli import main
    from bayes_dp.report import _cli_reproduction

    groups = [
        bdp.Evidence(A, name="lira"),
        bdp.Evidence(C, likelihood="bivariate_normal", name="canary", strength="own"),
    ]
    prior = bdp.Prior(eps=bdp.HalfNormal(5.0), s=bdp.Beta(2.0, 3.0))
    post = bdp.estimate_epsilon(groups, delta=1e-6, prior=prior, seed=4, **FAST)
    csv_text, command = _cli_reproduction(post.settings)
    assert "--prior-s-beta 2.0 3.0" in command and "--prior-eps-scale 5.0" in command
    (tmp_path / "counts.csv").write_text(csv_text)
    args = shlex.split(command)[1:]
    args[args.index("--out") + 1] = str(tmp_path / "out")
    args[args.index("counts.csv")] = str(tmp_path / "counts.csv")
    from bayes_dp.results.diagnostics import passes_convergence_checks

    status = 0 if passes_convergence_checks(post) else 3  # the short run may fail the checks
    assert main([*args, "--no-report", "--progress-every", "0", "--quiet"]) == status
    capsys.readouterr()
    again = bdp.load_posterior(tmp_path / "out" / "posterior.nc")
    assert Model.from_settings(again.settings) == Model.from_settings(post.settings)
    again.settings.pop("input")  # the command records its counts file
    _same_run(post, again)


def test_reproduce_from_a_record_without_a_model():
    from bayes_dp.report import _cli_reproduction, _reproduce_snippet

    st = {"delta": 1e-5, "fixed": {}}
    assert _reproduce_snippet(st).startswith("# the recorded settings describe no run")
    assert "no evidence groups" in _cli_reproduction(st)
