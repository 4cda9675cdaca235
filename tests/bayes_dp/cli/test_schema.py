"""``bayes_dp.cli.schema`` names exactly the fields ``bayes-dp estimate`` writes.

The documentation renders the schema (docs/reference/output.md); these tests run the command
(short runs through ``main``) and compare the keys of its ``--json`` object, of the ``claim``
in it, of the object written on failure, and the groups and attributes of ``posterior.nc`` with
the schema, both ways: a field written but not described, or described but never written,
fails.
"""

import json

import numpy as np
import pytest

from bayes_dp.cli import main, schema
from bayes_dp.results import arviz_adapter

FAST = ["--draws", "200", "--tune", "100", "--chains", "2", "--progress-every", "0", "--quiet"]
#: keys written only in some runs: the comparison of --compare (Gaussian-DP runs)
OPTIONAL = {"comparison"}


def _json(capsys, argv) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.fixture
def counts_run(tmp_path, capsys):
    path = tmp_path / "counts.csv"
    path.write_text("fp,n_neg,fn,n_pos\n40,1000,250,1000\n50,1000,200,1000\n")
    out = tmp_path / "out"
    rc, obj = _json(
        capsys, ["estimate", str(path), "--delta", "1e-5", "--out", str(out), "--seed", "0", *FAST]
    )
    assert rc in (0, 3)
    return obj, out


def test_json_keys_are_the_schemas(counts_run):
    obj, _ = counts_run
    assert set(obj) == set(schema.JSON_FIELDS)


def test_claim_keys_are_the_schemas(counts_run):
    obj, _ = counts_run
    assert set(obj["claim"]) == set(schema.CLAIM_FIELDS)


def test_netcdf_groups_and_attributes_are_the_schemas(counts_run):
    _, out = counts_run
    data = arviz_adapter.from_netcdf(out / "posterior.nc")
    groups = {
        g
        for g in ("posterior", "sample_stats", "log_likelihood")
        if arviz_adapter.has_group(data, g)
    }
    attrs = {k for k in arviz_adapter.attrs(data) if k.startswith("bayes_dp_")}
    described = set(schema.NETCDF)
    assert groups | attrs == described
    assert all(g in described for g in groups) and "posterior" in groups


def test_gdp_json_keys_are_the_schemas(tmp_path, capsys):
    rng = np.random.default_rng(0)
    scores = tmp_path / "scores.npz"
    np.savez(scores, in_scores=rng.normal(1.5, 1, 200), out_scores=rng.normal(0, 1, 200))
    argv = ["estimate", str(scores), "--delta", "1e-5", "--out", str(tmp_path / "o")]
    rc, obj = _json(capsys, [*argv, "--draws", "500", "--quiet"])
    assert rc in (0, 4)
    assert set(obj) - set(schema.JSON_FIELDS) == set(schema.JSON_GDP_FIELDS) - OPTIONAL
    assert set(obj["claim"]) == set(schema.CLAIM_FIELDS)


def test_failure_json_keys_are_the_schemas(tmp_path, capsys):
    rc, obj = _json(
        capsys, ["estimate", str(tmp_path / "nope.csv"), "--delta", "1e-5", "--out", "x"]
    )
    assert rc == 1 and set(obj) == set(schema.JSON_FAILURE_FIELDS)


def test_every_field_has_words():
    for table in (
        schema.JSON_FIELDS,
        schema.JSON_GDP_FIELDS,
        schema.JSON_FAILURE_FIELDS,
        schema.CLAIM_FIELDS,
        schema.NETCDF,
    ):
        assert table and all(isinstance(v, str) and len(v) > 3 for v in table.values())
