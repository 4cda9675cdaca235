import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
from bayes_dp.results import arviz_adapter
from bayes_dp.results.posterior import Posterior

COUNTS = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)


@pytest.fixture(scope="module")
def post():
    return bdp.estimate_epsilon(COUNTS, delta=1e-5, seed=0, chains=2, draws=4000, tune=1000)


def normal_posterior(mu=1.0, sd=0.5, n=(4, 50_000)):
    x = np.random.default_rng(0).normal(mu, sd, size=n)
    return Posterior({"eps": x}, {"accept_joint": x > mu}, {"fixed": {}})


def test_statistics_against_closed_forms():
    p = normal_posterior()
    z = stats.norm.ppf(0.95)
    lo, hi = p.interval(0.9)
    assert lo == pytest.approx(1 - 0.5 * z, abs=0.01) and hi == pytest.approx(1 + 0.5 * z, abs=0.01)
    h = p.hdi(0.9)  # symmetric unimodal: HDI = equal-tailed interval
    assert h[0] == pytest.approx(lo, abs=0.02) and h[1] == pytest.approx(hi, abs=0.02)
    assert p.mean() == pytest.approx(1.0, abs=0.01)
    assert p.quantile([0.5])[0] == pytest.approx(1.0, abs=0.01)
    d = p.diagnostics()["eps"]
    assert d["r_hat"] < 1.01 and d["ess_bulk"] > 150_000


def test_summary_columns(post):
    s = post.summary()
    assert list(s.index) == ["eps", "s"]
    for col in [
        "mean",
        "sd",
        "q5%",
        "q50%",
        "q95%",
        "hdi_90%_lo",
        "hdi_90%_hi",
        "mcse_mean",
        "ess_bulk",
        "ess_tail",
        "r_hat",
    ]:
        assert col in s.columns
    assert s.loc["eps", "q5%"] == pytest.approx(post.quantile(0.05))
    assert s.loc["eps", "mean"] == pytest.approx(post.mean())
    # the HDI columns are named by the HDI's probability, not by tail quantiles
    assert tuple(s.loc["eps", ["hdi_90%_lo", "hdi_90%_hi"]]) == pytest.approx(post.hdi(0.9))
    assert {"hdi_80%_lo", "hdi_80%_hi"} <= set(post.summary(0.8).columns)
    # every column has a meaning in the glossary
    from bayes_dp.results.diagnostics import glossary

    assert set(glossary(s.columns)) == {"mean", "sd", "q", "hdi"} | {
        c for c in s.columns if not c.startswith(("q", "hdi"))
    }


@pytest.mark.parametrize("method", ["interval", "hdi", "summary"])
def test_a_percentage_for_prob_is_explained(post, method):
    with pytest.raises(ValueError, match=r"not a percentage; found 90 \(did you mean 0.9\?\)"):
        getattr(post, method)(90)
    with pytest.raises(ValueError, match="must be < 1.0"):
        getattr(post, method)(1.0)


def test_netcdf_round_trip(post, tmp_path):
    path = post.to_netcdf(tmp_path / "p.nc")
    back = bdp.load_posterior(path)
    np.testing.assert_array_equal(back.draws("eps"), post.draws("eps"))
    np.testing.assert_array_equal(back.draws("s"), post.draws("s"))
    assert back.settings == post.settings
    assert back.acceptance == pytest.approx(post.acceptance)
    with pytest.raises(FileNotFoundError, match="path"):
        bdp.load_posterior(tmp_path / "missing.nc")


def test_to_arviz_groups(post):
    data = post.to_arviz()
    ds = arviz_adapter.group(data, "posterior")
    assert set(ds.data_vars) == {"eps", "s"}
    assert ds["eps"].dims == ("chain", "draw")
    assert ds["eps"].shape == (2, 4000)
    assert "accept_joint" in arviz_adapter.group(data, "sample_stats").data_vars


def test_bad_queries(post):
    with pytest.raises(ValueError, match="'tau'"):
        post.draws("tau")
    with pytest.raises(ValueError, match="prob"):
        post.interval(1.5)
    with pytest.raises(ValueError, match="q"):
        post.quantile(-0.1)
    with pytest.raises(TypeError, match="var"):
        post.draws(3)


def test_check_warns_on_bad_chains():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 400)) + np.array([[0.0], [3.0]])  # two chains that disagree
    p = Posterior({"eps": x}, {}, {})
    with pytest.warns(bdp.ConvergenceWarning) as rec:
        p.check()
    assert str(rec[0].message).startswith("r_hat")  # then the ESS, one warning per problem
    assert rec[0].message.var == "eps" and rec[0].message.r_hat > 1.01


def test_load_posterior_names_files_it_cannot_read(tmp_path):
    plain = tmp_path / "plain.csv"
    plain.write_text("fp,n_neg,fn,n_pos\n1,10,2,10\n")
    with pytest.raises(ValueError) as info:
        bdp.load_posterior(plain)
    msg = str(info.value)
    assert "plain.csv" in msg and "not a netCDF file" in msg and "'fp,n_neg,fn,n_pos'" in msg
    assert "Posterior.to_netcdf" in msg and "signature" not in msg
    with pytest.raises(ValueError, match="is a folder"):
        bdp.load_posterior(tmp_path)
    broken = tmp_path / "broken.nc"
    broken.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 40)  # HDF5 signature, no content
    with pytest.raises(ValueError, match="broken.nc.*could not be read as a bayes_dp posterior"):
        bdp.load_posterior(broken)
    with pytest.raises(FileNotFoundError, match="nope.nc"):
        bdp.load_posterior(tmp_path / "nope.nc")


def test_prior_sensitivity_rejects_bad_input():
    import bayes_dp as bdp

    post = bdp.estimate_epsilon(
        bdp.AttackCounts([40], 1000, [250], 1000),
        delta=1e-5,
        prior=bdp.Prior(s=0.5),
        chains=1,
        draws=50,
        tune=50,
        seed=0,
        check=False,
    )
    with pytest.raises(TypeError, match="factors"):
        post.prior_sensitivity(0.9, factors=2.0)
    with pytest.raises(ValueError, match="factors"):
        post.prior_sensitivity(0.9, factors=(-1.0,))
    with pytest.raises(ValueError, match="prob"):
        post.prior_sensitivity(1.5)
    old = type(post)(
        {"eps": post.draws("eps")}, {}, {k: v for k, v in post.settings.items() if k != "eps_prior"}
    )
    with pytest.raises(ValueError, match="eps_prior"):
        old.prior_sensitivity()
