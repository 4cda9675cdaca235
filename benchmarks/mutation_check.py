"""Mutation check: which CI tests fail when the posteriors are broken on purpose.

Each mutation of ``tests/_support/mutations.py`` (``narrow15``: every posterior's draws shrunk
15% towards their median; ``shift02``: eps draws 0.2 higher; ``s_fixed_1``: the band model's
strength fixed at 1; any mutation registered there) is installed by ``BAYES_DP_MUTATION`` in a
pytest run of each claim family's tests, file by file (``-x``: a file stops at its first
failure, which is enough to know that it catches the defect; ``--timeout`` per test). The
script prints a table family x mutation -> failing tests and writes it as Markdown; a family
that no test catches under some mutation is flagged (exit status 1).

    nice -n 10 python benchmarks/mutation_check.py                    # the quick set (below)
    nice -n 10 python benchmarks/mutation_check.py --stage            # every statistical test
    python benchmarks/mutation_check.py --mutations narrow15 --families planner --out t.md

The quick set (``QUICK``) is, per family, the statistical tests that check a posterior against
an exact reference (cheapest first) and the claim checks (which state a frequentist bound,
not the posterior, and are expected to pass under a mutation of the posterior); ``--stage``
runs every test of ``-m statistical``, each in its family (``FAMILY_OF``), and takes hours.
A run without a mutation (``--baseline``, on by default) shows that the same tests pass as
they are.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests._support.mutations import ENV, FAMILIES, REGISTRY  # noqa: E402

#: path prefix (or node id prefix) -> claim family, first match wins
FAMILY_OF = [
    ("tests/statistical/test_claim_boundary.py::test_one_run", "one-run"),
    ("tests/statistical/test_canary", "canaries"),
    ("tests/bayes_dp/gdp/", "Gaussian DP"),
    ("tests/bayes_dp/one_run/", "one-run"),
    ("tests/bayes_dp/planning/", "planner"),
    ("tests/statistical/test_lira", "score matrices"),
    ("tests/statistical/test_score_matrix", "score matrices"),
    ("tests/statistical/test_guess", "score matrices"),
    ("tests/statistical/test_sbc_score_matrix", "score matrices"),
    ("tests/statistical/test_cross_fed", "score matrices"),
    ("tests/statistical/test_reflect_null", "score matrices"),
    ("tests/statistical/test_dispersion", "score matrices"),
    ("tests/statistical/test_pooled", "score matrices"),
    ("tests/mia/", "score matrices"),
    ("tests/samplers/exact/test_fitted_proposal", "score matrices"),
    ("tests/", "designed bases"),
]

#: the quick set: per family, CI tests (statistical unless marked "main") in the order run
QUICK = {
    "designed bases": [
        "tests/statistical/test_exact_sampler_vs_quadrature.py::"
        "test_sampler_matches_exact_posterior[two-bases-beta]",
        "tests/statistical/test_correlated_likelihoods.py::"
        "test_split_into_shared_groups_is_the_same_posterior",
        "tests/statistical/test_claim_boundary.py::test_claim_is_not_above_an_optimal_attacks_eps",
    ],
    "score matrices": [
        # the default evidence since issue 49: the guessing game's guesses (their posterior
        # against quadrature; the default path at eps = 0)
        "tests/statistical/test_guesses_posterior.py::"
        "test_sampler_on_one_run_audits_matches_quadrature[bits-and-pairs]",
        "tests/statistical/test_score_matrix_game.py::"
        "test_default_posterior_does_not_collapse_or_accuse_at_eps_0[independent]",
        "tests/statistical/test_lira_scale_mixing.py::"
        "test_no_table_path_matches_the_quadrature_reference",
        "tests/statistical/test_lira_model.py::test_default_run_samples_the_main_mode",
        "tests/statistical/test_score_matrix_claim.py::"
        "test_claim_never_above_the_truth_where_the_design_allows_it",
    ],
    "Gaussian DP": [
        "tests/bayes_dp/gdp/test_joint.py::"
        "test_own_strengths_of_count_groups_match_two_dimensional_quadrature",
        "tests/bayes_dp/gdp/test_gdp.py::"
        "test_one_run_audits_as_gdp_evidence_match_quadrature_and_combine_with_scores",
        "tests/bayes_dp/gdp/test_gdp_shapes.py::"
        "test_the_claim_never_accuses_non_gaussian_mechanisms_reduced",
    ],
    "one-run": [
        "tests/bayes_dp/one_run/test_one_run.py::test_posterior_matches_one_dimensional_quadrature",
        "tests/bayes_dp/one_run/test_one_run.py::"
        "test_randomized_response_calibration_truth_from_the_prior",
        "tests/statistical/test_claim_boundary.py::test_one_run_claim_is_not_above_the_truth",
    ],
    "planner": [
        "tests/bayes_dp/planning/test_planning.py::"
        "test_grid_posterior_over_designs[3-1000-3.0-0.05]",
        "tests/bayes_dp/planning/test_planning.py::test_grid_posterior_one_base_of_ten_thousand",
    ],
    "canaries": [
        "tests/statistical/test_canary_posterior.py::"
        "test_canary_and_designed_bases_posterior_matches_the_reference",
    ],
}


def family_of(nodeid: str) -> str:
    return next(fam for prefix, fam in FAMILY_OF if nodeid.startswith(prefix))


def stage_tests() -> dict[str, list[str]]:
    """Every test of ``-m statistical``, by family."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "statistical", "--collect-only", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    tests = defaultdict(list)
    for line in out.splitlines():
        if "::" in line and not line.startswith(" "):
            tests[family_of(line.strip())].append(line.strip())
    return tests


def run_file(nodeids, mutation, timeout, log) -> dict[str, str]:
    """Run ``nodeids`` (one file) under ``mutation`` (None: as is); {nodeid: outcome}."""
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop(ENV, None)
    if mutation:
        env[ENV] = mutation
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        cmd = [
            sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
            f"--timeout={timeout}", f"--junitxml={xml}", "-o", "junit_family=xunit2", *nodeids,
        ]  # fmt: skip
        t0 = time.time()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        log.write(f"\n$ {ENV}={mutation or ''} {' '.join(cmd[1:])}\n{proc.stdout[-3000:]}\n")
        log.flush()
        res = {n: "not run (-x)" for n in nodeids}
        if xml.exists():
            for case in ET.parse(xml).getroot().iter("testcase"):
                path = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
                nodeid = f"{path}::{case.get('name')}"
                if case.find("failure") is not None:
                    res[nodeid] = "FAILED"
                elif case.find("error") is not None:
                    res[nodeid] = "ERROR"
                elif case.find("skipped") is not None:
                    res[nodeid] = "skipped"
                else:
                    res[nodeid] = "passed"
        if proc.returncode not in (0, 1) and not any(
            v in ("FAILED", "ERROR") for v in res.values()
        ):
            for n in nodeids:  # a crash or a timeout (thread method: the run ends)
                if res[n] == "not run (-x)":
                    res[n] = f"ERROR (exit {proc.returncode})"
        res["_seconds"] = f"{time.time() - t0:.0f}"
    return res


def _short(nodeid: str) -> str:
    path, _, name = nodeid.partition("::")
    return f"`{Path(path).name}::{name}`"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mutations", nargs="*", default=sorted(REGISTRY), choices=sorted(REGISTRY))
    ap.add_argument("--families", nargs="*", default=list(FAMILIES), choices=list(FAMILIES))
    ap.add_argument("--stage", action="store_true", help="every statistical test, not QUICK")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run without mutation")
    ap.add_argument("--exclude", nargs="*", default=[], help="leave out tests whose id has this")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per test")
    ap.add_argument("--out", default=str(ROOT / "mutation_check.md"), help="Markdown table")
    ap.add_argument("--log", default=str(ROOT / "mutation_check.log"), help="pytest output")
    args = ap.parse_args(argv)

    tests = stage_tests() if args.stage else QUICK
    tests = {f: [n for n in ns if not any(x in n for x in args.exclude)] for f, ns in tests.items()}
    runs = ([None] if not args.no_baseline else []) + list(args.mutations)
    table: dict[tuple[str, str | None], dict[str, str]] = {}
    t_start = time.time()
    with open(args.log, "w", encoding="utf-8") as log:
        for fam in args.families:
            by_file = defaultdict(list)
            for n in tests.get(fam, []):
                by_file[n.split("::")[0]].append(n)
            for mutation in runs:
                res: dict[str, str] = {}
                for nodeids in by_file.values():
                    out = run_file(nodeids, mutation, args.timeout, log)
                    secs = out.pop("_seconds")
                    res.update(out)
                    print(f"[{time.time() - t_start:6.0f} s] {fam} / {mutation or 'none'}: "
                          f"{', '.join(f'{_short(k)} {v}' for k, v in out.items())} ({secs} s)",
                          flush=True)  # fmt: skip
                table[fam, mutation] = res
    ok = True
    lines = [
        f"Command: `python benchmarks/mutation_check.py {' '.join(argv or sys.argv[1:])}`; "
        f"{datetime.date.today().isoformat()}, {platform.node()} ({os.cpu_count()} cores, "
        f"Python {platform.python_version()}), {time.time() - t_start:.0f} s.",
        "",
        "| family | " + " | ".join(m or "no mutation" for m in runs) + " |",
        "|---|" + "---|" * len(runs),
    ]
    for fam in args.families:
        cells = []
        for mutation in runs:
            res = table[fam, mutation]
            bad = [k for k, v in res.items() if v.startswith(("FAILED", "ERROR"))]
            if mutation is None:
                cells.append(
                    "all pass" if not bad else "FAILS: " + ", ".join(_short(k) for k in bad)
                )
                ok &= not bad
            elif fam not in REGISTRY[mutation].families:
                cells.append("n/a (not touched)")
            elif bad:
                cells.append("; ".join(f"{_short(k)} ({res[k].split()[0]})" for k in bad))
            else:
                cells.append("**none fails**")
                ok = False
        lines.append(f"| {fam} | " + " | ".join(cells) + " |")
    lines += ["", "Every test run, and its outcome:", ""]
    lines += ["| test | " + " | ".join(m or "no mutation" for m in runs) + " |"]
    lines += ["|---|" + "---|" * len(runs)]
    for fam in args.families:
        for n in tests.get(fam, []):
            lines.append(
                f"| {_short(n)} ({fam}) | "
                + " | ".join(table[fam, m].get(n, "?") for m in runs)
                + " |"
            )
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
