"""The sampler settings objects bdp.Exact and bdp.MHAAR: checks, the deprecated keywords, and
what is derived from their fields (recorded settings, command-line options, reproduction)."""

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.inference.settings import (
    DEPRECATED_KEYWORDS,
    cli_options,
    option_name,
    parse_field,
    sampler_fields,
    sampler_from_settings,
)

COUNTS = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
TINY = dict(delta=1e-5, chains=1, draws=40, tune=20, seed=4, check=False, progress=False)


@pytest.mark.parametrize(
    "build, exc, words",
    [
        (lambda: bdp.Exact(target_accept=1.0), ValueError, ["target_accept", "1.0"]),
        (lambda: bdp.Exact(target_accept="x"), TypeError, ["target_accept", "x"]),
        (lambda: bdp.MHAAR(n_aux=1), ValueError, ["n_aux", "1"]),
        (lambda: bdp.MHAAR(n_aux=2.5), TypeError, ["n_aux", "2.5"]),
        (lambda: bdp.MHAAR(aux_proposal="gauss"), ValueError, ["aux_proposal", "gauss"]),
        (lambda: bdp.MHAAR(aux_uniform_weight=1.5), ValueError, ["aux_uniform_weight", "1.5"]),
        (lambda: bdp.MHAAR(aux_band_weight=1.0), ValueError, ["aux_band_weight", "1.0"]),
        (lambda: bdp.MHAAR(aux_band_weight=-0.1), ValueError, ["aux_band_weight", "-0.1"]),
        (lambda: bdp.MHAAR(integrate_latents="yes"), TypeError, ["integrate_latents", "yes"]),
        (lambda: bdp.MHAAR(thin=0), ValueError, ["thin", "0"]),
        (lambda: bdp.MHAAR(target_accept=0.0), ValueError, ["target_accept", "0.0"]),
        (lambda: bdp.Exact(n_aux=8), TypeError, ["n_aux"]),  # an MHAAR setting: no such field
    ],
)
def test_bad_settings_name_the_field_and_value(build, exc, words):
    with pytest.raises(exc) as info:
        build()
    for w in words:
        assert w in str(info.value)


def test_settings_are_frozen_values():
    s = bdp.MHAAR(n_aux=np.int64(8))
    assert type(s.n_aux) is int and s == bdp.MHAAR(n_aux=8) and hash(s) == hash(bdp.MHAAR(n_aux=8))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.n_aux = 4
    assert bdp.Exact() != bdp.MHAAR()
    assert eval(s.to_python(), {"bdp": bdp}) == s
    assert bdp.MHAAR(n_aux=8).to_python(every=False) == "bdp.MHAAR(n_aux=8)"


def test_deprecated_keywords_warn_and_give_the_same_run():
    with pytest.warns(DeprecationWarning, match=r"sampler=bdp\.MHAAR\(n_aux=8, thin=3\)") as rec:
        old = bdp.estimate_epsilon(COUNTS, method="mhaar", n_aux=8, thin=3, **TINY)
    assert rec[0].filename == __file__  # points at the caller
    new = bdp.estimate_epsilon(COUNTS, sampler=bdp.MHAAR(n_aux=8, thin=3), **TINY)
    np.testing.assert_array_equal(old.draws("eps"), new.draws("eps"))
    assert old.settings["n_aux"] == 8 and old.settings["thin"] == 3
    with pytest.warns(DeprecationWarning, match=r"sampler=bdp\.Exact\(target_accept=0\.4\)"):
        bdp.estimate_epsilon(COUNTS, target_accept=0.4, **TINY)


def test_deprecated_mhaar_keyword_under_exact_still_raises():
    # as before the deprecation: a setting of MHAAR given to the exact sampler is an error
    with pytest.raises(ValueError, match=r"`n_aux` applies to method='mhaar' only.*n_aux=8"):
        bdp.estimate_epsilon(COUNTS, n_aux=8, **TINY)
    with pytest.raises(ValueError, match="thin=2"):
        bdp.estimate_epsilon(COUNTS, method="exact", thin=2, **TINY)
    with pytest.raises(ValueError, match="method.*'gibbs'"):
        bdp.estimate_epsilon(COUNTS, method="gibbs", **TINY)


def test_sampler_and_keywords_together_or_unknown_keywords_raise():
    with pytest.raises(TypeError, match="not both"):
        bdp.estimate_epsilon(COUNTS, sampler=bdp.MHAAR(), n_aux=8, **TINY)
    with pytest.raises(TypeError, match="'n_auxx'"):
        bdp.estimate_epsilon(COUNTS, n_auxx=8, **TINY)
    with pytest.raises(TypeError, match="sampler.*'mhaar'"):
        bdp.estimate_epsilon(COUNTS, sampler="mhaar", **TINY)


def test_deprecated_keywords_are_the_fields_and_method():
    assert set(DEPRECATED_KEYWORDS) == {"method"} | {f.name for f in dataclasses.fields(bdp.MHAAR)}


@pytest.mark.parametrize("sampler", [bdp.Exact(target_accept=0.35), bdp.MHAAR(n_aux=4, thin=1)])
def test_recorded_settings_are_the_fields_and_read_back(sampler, tmp_path):
    post = bdp.estimate_epsilon(COUNTS, sampler=sampler, **TINY)
    for name, value in sampler_fields(sampler).items():
        assert post.settings[name] == value
    assert post.settings["method"] == sampler.method
    post.to_netcdf(tmp_path / "p.nc")
    back = bdp.load_posterior(tmp_path / "p.nc")
    assert sampler_from_settings(back.settings) == sampler


def test_default_tune_is_the_samplers():
    exact = bdp.estimate_epsilon(COUNTS, delta=1e-5, chains=1, draws=5, seed=0, check=False)
    assert exact.settings["tune"] == bdp.Exact.default_tune
    mh = bdp.estimate_epsilon(
        COUNTS, delta=1e-5, chains=1, draws=5, seed=0, check=False, sampler=bdp.MHAAR()
    )
    assert mh.settings["tune"] == bdp.MHAAR.default_tune


def test_cli_options_come_from_the_fields():
    """Every field of bdp.Exact and bdp.MHAAR is an option of ``bayes-dp estimate``, parsed and
    checked by the field; a refused value is a usage error naming the option."""
    out = subprocess.run(
        [sys.executable, "-m", "bayes_dp", "estimate", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for cls in (bdp.Exact, bdp.MHAAR):
        for f in dataclasses.fields(cls):
            assert option_name(f.name) in out
    assert "--sampler {exact,mhaar}" in out
    assert parse_field(bdp.Exact, "target_accept", "0.25") == 0.25
    assert parse_field(bdp.MHAAR, "integrate_latents", "true") is True
    assert parse_field(bdp.MHAAR, "n_aux", "8") == 8
    with pytest.raises(ValueError, match="n_aux.*1"):
        parse_field(bdp.MHAAR, "n_aux", "1")
    with pytest.raises(ValueError, match="integrate_latents.*maybe"):
        parse_field(bdp.MHAAR, "integrate_latents", "maybe")
    bad = subprocess.run(
        [sys.executable, "-m", "bayes_dp", "estimate", "x.csv", "--delta", "0", "--out", "o"]
        + ["--target-accept", "1.5"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "--target-accept" in bad.stderr and "1.5" in bad.stderr
    assert cli_options(bdp.Exact()) == []
    assert cli_options(bdp.Exact(target_accept=0.25)) == ["--target-accept 0.25"]


def test_cli_sampler_options_must_fit_the_sampler(tmp_path, capsys):
    """An MHAAR option without ``--sampler mhaar``, or a time budget with it, is a usage error
    (exit 2, the option named) before anything is read."""
    from bayes_dp.cli import main

    base = ["estimate", str(tmp_path / "missing.csv"), "--delta", "1e-5", "--out", str(tmp_path)]
    assert main([*base, "--n-aux", "8"]) == 2
    assert "--n-aux" in capsys.readouterr().err
    assert main([*base, "--sampler", "mhaar", "--max-time", "10"]) == 2
    assert "--max-time" in capsys.readouterr().err
    assert main([*base, "--sampler", "gibbs"]) == 2
    assert "gibbs" in capsys.readouterr().err


def test_cli_runs_mhaar_with_its_options_and_the_report_repeats_it(tmp_path, capsys):
    """``--sampler mhaar --n-aux 4 --thin 1`` runs MHAAR with those fields, records them, and
    the report's command repeats them (same draws as the Python call with the same object)."""
    from bayes_dp.cli import main
    from bayes_dp.report import _cli_reproduction

    csv = tmp_path / "c.csv"
    csv.write_text("fp,n_neg,fn,n_pos\n50,1000,300,1000\n40,1000,350,1000\n")
    out = tmp_path / "o"
    args = ["estimate", str(csv), "--delta", "1e-5", "--out", str(out), "--seed", "2"]
    args += ["--sampler", "mhaar", "--n-aux", "4", "--thin", "1", "--draws", "200"]
    args += ["--tune", "100", "--chains", "2", "--json"]
    assert main(args) in (0, 3)  # 200 draws: converged or not, the run is what was asked
    capsys.readouterr()
    post = bdp.load_posterior(out / "posterior.nc")
    assert post.settings["method"] == "mhaar"
    assert post.settings["n_aux"] == 4 and post.settings["thin"] == 1
    again = bdp.estimate_epsilon(
        bdp.AttackCounts(fp=[50, 40], n_neg=1000, fn=[300, 350], n_pos=1000),
        delta=1e-5,
        sampler=bdp.MHAAR(n_aux=4, thin=1),
        draws=200,
        tune=100,
        chains=2,
        seed=2,
        progress=False,
        check=False,  # 200 draws: no convergence warning asked for
    )
    np.testing.assert_array_equal(post.draws("eps"), again.draws("eps"))
    _, cmd = _cli_reproduction(post.settings)
    assert "--sampler mhaar" in cmd and "--n-aux 4" in cmd and "--thin 1" in cmd
