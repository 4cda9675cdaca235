"""Same draws, bit for bit, as the stored fingerprint (``tests/project/fingerprint.py``).

A refactor must not change one bit of what a public entry point returns for a seed; a change
that is meant to (a new default, a fixed bug) stores a new fingerprint with
``python -m tests.project.fingerprint --write`` and says why in its commit. The comparison is
skipped under other versions of Python, numpy, scipy or numba than those it was stored with,
since compiled code may round differently there.
"""

import json

import pytest

from tests.project import fingerprint

STORED = json.loads(fingerprint.STORED.read_text())
#: cases that run in seconds once the kernels are compiled
QUICK = ("exact/fixed_s", "exact/s_one", "one_run/fixed_s", "simulate")


def _compare(only=None):
    if STORED["versions"] != fingerprint.versions():
        pytest.skip(
            f"fingerprint stored with {STORED['versions']}, running {fingerprint.versions()}"
        )
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
