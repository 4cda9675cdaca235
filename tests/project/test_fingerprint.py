"""Same draws, bit for bit, as the stored fingerprint (``tests/project/fingerprint.py``).

A refactor must not change one bit of what a public entry point returns for a seed; a change
that is meant to (a new default, a fixed bug) stores a new fingerprint with
``python -m tests.project.fingerprint --write`` and says why in its commit. The comparison is
skipped under other versions of Python, numpy, scipy or numba than those it was stored with,
since compiled code may round differently there; CI installs those versions
(``.ci/constraints.txt``) and sets ``BAYES_DP_FINGERPRINT_REQUIRED=1``, under which a version
mismatch fails instead, so the comparison cannot drop out of CI unseen.
"""

import json
import os
import re
from pathlib import Path

import pytest

from tests.project import fingerprint

STORED = json.loads(fingerprint.STORED.read_text())
#: set (CI does) to make a version mismatch a failure rather than a skip
REQUIRED = "BAYES_DP_FINGERPRINT_REQUIRED"
#: cases that run in seconds once the kernels are compiled
QUICK = ("exact/fixed_s", "exact/s_one", "one_run/fixed_s", "simulate")


def _compare(only=None):
    if STORED["versions"] != fingerprint.versions():
        msg = f"fingerprint stored with {STORED['versions']}, running {fingerprint.versions()}"
        if os.environ.get(REQUIRED, "") not in ("", "0"):
            pytest.fail(f"{msg}; {REQUIRED} is set (CI pins the versions: .ci/constraints.txt)")
        pytest.skip(msg)
    current = fingerprint.fingerprint(only)
    stored = {k: v for k, v in STORED["cases"].items() if only is None or k.startswith(only)}
    assert fingerprint.differences(stored, current) == []


def test_quick_cases_give_the_stored_draws():
    _compare(QUICK)


@pytest.mark.slow
def test_every_case_gives_the_stored_draws():
    _compare()


def test_a_changed_draw_is_reported():
    case = next(iter(STORED["cases"]))
    changed = {case: {**STORED["cases"][case], "draws[eps]": "0" * 16}}
    assert fingerprint.differences(STORED["cases"], {**STORED["cases"], **changed}) == [
        f"{case} draws[eps]: stored {STORED['cases'][case]['draws[eps]']}, now {'0' * 16}"
    ]
    missing = dict(STORED["cases"])
    del missing[case]
    assert fingerprint.differences(STORED["cases"], missing) == [
        f"{case}: only in the stored fingerprint"
    ]


def test_ci_pins_the_versions_the_fingerprint_was_stored_with():
    # .ci/run installs with these constraints: they must be the stored versions, or CI's
    # comparison fails (BAYES_DP_FINGERPRINT_REQUIRED) instead of guarding the draws
    text = (Path(__file__).resolve().parents[2] / ".ci" / "constraints.txt").read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", text, flags=re.M))
    for lib in ("numpy", "scipy", "numba"):
        assert pins.get(lib) == STORED["versions"][lib], (lib, pins.get(lib), STORED["versions"])
