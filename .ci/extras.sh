#!/usr/bin/env bash
# Second CI stage: install the optional extras (torch with opacus, dask, ray, flower, hf) into the
# active environment, one at a time with a time limit, then run only the tests that need them.
# .ci/run calls it inside its virtual environment after the main test command; it also runs
# alone in any environment that has the project installed: bash .ci/extras.sh
#
# An extra that fails to install (or takes longer than EXTRAS_INSTALL_LIMIT seconds, default
# 300) fails the stage, unless it is named in EXTRAS_MAY_FAIL (space-separated, e.g.
# EXTRAS_MAY_FAIL="ray flower" on a platform where those have no wheels; printed below): then
# it is reported and its tests are skipped, each with its reason, in pytest's summary. A failing
# test fails the stage, and so does a run of fewer tests than the floor (BAYES_DP_MIN_TESTS,
# tests/conftest.py: every test of the three files, less a margin) when every extra installed.
# EXTRAS_CONSTRAINTS names a pip constraints file for the installs (.ci/run passes
# .ci/constraints.txt, so that an extra cannot move numpy, scipy or numba).
set -uo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 MPLBACKEND=Agg
LIMIT=${EXTRAS_INSTALL_LIMIT:-300}
MAY_FAIL=" ${EXTRAS_MAY_FAIL:-} "
FLOOR=15
log=$(mktemp)
stage_t0=$(date +%s)
cons=()
if [ -n "${EXTRAS_CONSTRAINTS:-}" ]; then
    cons=(-c "$EXTRAS_CONSTRAINTS")
    echo "extras installed under the constraints of $EXTRAS_CONSTRAINTS"
fi
echo "extras allowed not to install (EXTRAS_MAY_FAIL): ${EXTRAS_MAY_FAIL:-none}"
failed=()
missing=()

# the requirements of one extra, read from pyproject.toml (so the project stays editable)
requirements() {
    python - "$1" <<'EOF'
import sys
import tomllib

with open("pyproject.toml", "rb") as fh:
    extras = tomllib.load(fh)["project"]["optional-dependencies"]
print("\n".join(extras[sys.argv[1]]))
EOF
}

# torch first: the extra pins the CPU build that opacus then accepts; flower before ray, as
# flwr[simulation] pins its own ray version
for extra in torch dask flower ray hf; do
    mapfile -t reqs < <(requirements "$extra")
    t0=$(date +%s)
    if timeout "$LIMIT" python -m pip install -q "${cons[@]}" "${reqs[@]}" >"$log" 2>&1; then
        echo "extra '$extra' (${reqs[*]}) installed in $(($(date +%s) - t0)) s"
    else
        rc=$?
        why="exit status $rc"
        [ "$rc" -eq 124 ] && why="over the ${LIMIT} s limit"
        missing+=("$extra")
        if [[ "$MAY_FAIL" == *" $extra "* ]]; then
            echo "extra '$extra' NOT installed ($why; allowed by EXTRAS_MAY_FAIL): its tests are SKIPPED below. pip said:"
        else
            failed+=("$extra")
            echo "extra '$extra' NOT installed ($why): the stage FAILS (EXTRAS_MAY_FAIL does not name it). pip said:"
        fi
        grep -v "WARNING: Location" "$log" | tail -5
    fi
done
rm -f "$log"
echo "extras installed in $(($(date +%s) - stage_t0)) s"

echo "== tests that need the extras (skips, with their reasons, are listed at the end)"
if [ ${#missing[@]} -eq 0 ]; then
    export BAYES_DP_MIN_TESTS=$FLOOR
else
    unset BAYES_DP_MIN_TESTS
    echo "no floor on the number of tests: not installed: ${missing[*]}"
fi
python -m pytest -p no:cacheprovider \
    tests/mia/test_engines.py tests/mia/test_pytorch.py tests/mia/canary/test_flower.py \
    "tests/mia/test_readers_variants.py::test_pe_pipeline_datasets_read_with_the_hf_extra"
status=$?
if [ ${#failed[@]} -gt 0 ]; then
    echo "extras stage FAILED: ${failed[*]} did not install (set EXTRAS_MAY_FAIL to allow it)"
    exit 1
fi
exit $status
