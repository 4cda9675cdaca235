"""Group names: which are allowed, and that they survive netCDF round trips as variable names."""

import unicodedata

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.core.evidence import check_group_name

COUNTS = bdp.AttackCounts([40, 50], 1000, [250, 200], 1000)
UNICODE_NAMES = ["café", "数据", "données-2024 run_b", "Ωmega_2", "_x", "हिन्दी", "Ж-1"]


@pytest.mark.parametrize("name", UNICODE_NAMES)
def test_unicode_names_are_accepted(name):
    assert bdp.Evidence(COUNTS, name=name).name == name


def test_names_are_normalised_to_nfc():
    decomposed = unicodedata.normalize("NFD", "café")
    assert decomposed != "café"
    assert bdp.Evidence(COUNTS, name=decomposed).name == "café"


@pytest.mark.parametrize(
    ("name", "exc", "words"),
    [
        ("9lives", ValueError, ["start with a letter", "'9lives'"]),
        ("", ValueError, ["empty"]),
        (" a", ValueError, ["space", "' a'"]),
        ("a  b", ValueError, ["two spaces"]),
        ("a/b", ValueError, ["'/'", "U+002F", "'a/b'"]),
        ("~x", ValueError, ["start with a letter", "'~x'"]),
        ("a.b", ValueError, ["'.'", "'a.b'"]),
        ("tab\tname", ValueError, ["'\\t'"]),
        ("x" * 65, ValueError, ["at most 64", "65"]),
        (3, TypeError, ["string", "int"]),
    ],
)
def test_bad_names_say_why(name, exc, words):
    with pytest.raises(exc) as info:
        bdp.Evidence(COUNTS, name=name)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_check_group_name_returns_nfc():
    assert check_group_name("Ж-1") == "Ж-1"


@pytest.mark.parametrize("name", UNICODE_NAMES)
def test_unicode_variable_names_survive_netcdf(tmp_path, name):
    rng = np.random.default_rng(0)
    draws = {
        "eps": rng.random((2, 7)),
        f"s_{name}": rng.random((2, 7)),
        f"tau_{name}": rng.random((2, 7)),
    }
    settings = {"groups": [{"name": name, "strength": "own"}], "seed": 0}
    post = bdp.Posterior(draws, {"accept_joint": rng.random((2, 7))}, settings)
    path = post.to_netcdf(tmp_path / "p.nc")
    back = bdp.load_posterior(path)
    assert back.var_names == list(draws)
    for v, x in draws.items():
        np.testing.assert_array_equal(back.draws(v), x)
    assert back.settings["groups"][0]["name"] == name
    assert list(back.summary().index) == list(draws)
