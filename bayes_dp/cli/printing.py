"""What ``bayes-dp estimate`` and ``bayes-dp gdp`` print: one screen, the rest behind flags.

By default: the summary table, the claim in two sentences (:attr:`bayes_dp.AuditClaim.headline`),
the first warning (the others counted) and where the files went. ``--explain`` adds the claim's
named parts (:attr:`bayes_dp.AuditClaim.details`), the frequentist companions, the acceptance
rates and every warning; ``--glossary`` the meaning of the summary's columns. ``--json`` prints
everything, whatever these flags say.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

__all__ = ["add_output_options", "print_claim", "print_files", "print_warnings"]

#: Width the CLI wraps its paragraphs to.
WIDTH = 100


def add_output_options(p: argparse.ArgumentParser) -> None:
    """Add ``--explain`` and ``--glossary`` to a subcommand that prints a claim."""
    p.add_argument(
        "--explain",
        action="store_true",
        help="after the claim, print its parts (the bound and how it is computed, the model's "
        "figures, the upper end, the reasons behind any warning), the frequentist companions "
        "and every warning (the report's details hold the same)",
    )
    p.add_argument(
        "--glossary",
        action="store_true",
        help="print what the summary table's columns and the acceptance rates mean",
    )


def print_claim(claim: dict, out, explain: bool) -> None:
    """Print the claim's two sentences; with ``explain``, its named parts, one paragraph each.

    Lines break at spaces only (never inside "per-target"), so that a pasted claim reads as
    written.
    """
    fill = {"width": WIDTH, "break_on_hyphens": False}
    print("\n" + textwrap.fill(claim["headline"], **fill), file=out)
    if explain:
        print("\nwhy (the claim's parts):", file=out)
        for name, text in claim["details"]:
            print(textwrap.fill(f"{name}: {text}", subsequent_indent="    ", **fill), file=out)


def print_warnings(warnings: list[str], explain: bool) -> None:
    """Print the first warning on stderr (every warning with ``explain``), the others counted."""
    shown = warnings if explain else warnings[:1]
    for w in shown:
        print(f"bayes-dp: warning: {w}", file=sys.stderr)
    if len(warnings) > len(shown):
        n = len(warnings) - len(shown)
        print(
            f"bayes-dp: {n} more warning{'s' if n > 1 else ''}: --explain prints them (the "
            "report and --json list them too)",
            file=sys.stderr,
        )


def print_files(files: dict, out) -> None:
    """Print where the results went (``files``: name -> path or None)."""
    written = [str(p) for p in files.values() if p is not None]
    print(f"\nwritten: {', '.join(written) if written else 'nothing'}", file=out)
