#!/usr/bin/env bash
# Second CI stage: install the optional extras (torch with opacus, dask, ray, flower, hf) into the
# active environment, one at a time with a time limit, then run only the tests that need them.
# .ci/run calls it inside its virtual environment after the main test command; it also runs
# alone in any environment that has the project installed: bash .ci/extras.sh
#
# An extra that fails to install (or takes longer than EXTRAS_INSTALL_LIMIT seconds, default
# 300) is reported here and its tests are skipped, each with its reason, in pytest's summary
# below; a failing test fails the stage.
set -uo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 MPLBACKEND=Agg
LIMIT=${EXTRAS_INSTALL_LIMIT:-300}
log=$(mktemp)
stage_t0=$(date +%s)

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
    if timeout "$LIMIT" python -m pip install -q "${reqs[@]}" >"$log" 2>&1; then
        echo "extra '$extra' (${reqs[*]}) installed in $(($(date +%s) - t0)) s"
    else
        rc=$?
        why="exit status $rc"
        [ "$rc" -eq 124 ] && why="over the ${LIMIT} s limit"
        echo "extra '$extra' NOT installed ($why): its tests are SKIPPED below. pip said:"
        grep -v "WARNING: Location" "$log" | tail -5
    fi
done
rm -f "$log"
echo "extras installed in $(($(date +%s) - stage_t0)) s"

echo "== tests that need the extras (skips, with their reasons, are listed at the end)"
python -m pytest -p no:cacheprovider \
    tests/mia/test_engines.py tests/mia/test_pytorch.py tests/mia/canary/test_flower.py \
    "tests/mia/test_readers_variants.py::test_pe_pipeline_datasets_read_with_the_hf_extra"
