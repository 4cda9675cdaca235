"""Entry point of the ``bayes-dp`` command (also ``python -m bayes_dp``).

Loading numpy, numba and matplotlib takes seconds; Ctrl-C then must not print a traceback.
This module imports nothing heavy itself, loads :mod:`bayes_dp.cli` inside ``try`` and turns
KeyboardInterrupt into exit status 130, like an interruption while sampling.
"""

from __future__ import annotations

import sys

__all__ = ["main", "console"]


def main(argv: list[str] | None = None) -> int:
    """Run ``bayes-dp``; returns the exit status (see :data:`bayes_dp.cli.EXIT_STATUSES`)."""
    try:
        from bayes_dp.cli import main as cli_main

        return cli_main(argv)
    except KeyboardInterrupt:
        # cli_main handles Ctrl-C while it runs; this is Ctrl-C while it was being imported
        try:
            print("bayes-dp: interrupted", file=sys.stderr, flush=True)
            args = sys.argv[1:] if argv is None else argv
            if "--json" in args:  # the same object as an interruption later would print
                import json

                obj = {"exit_status": 130, "exit_status_meaning": "interrupted (Ctrl-C)"}
                print(json.dumps({**obj, "error": "interrupted"}, indent=2), flush=True)
        except (KeyboardInterrupt, OSError):
            pass
        return 130


def console() -> int:
    """Run the ``bayes-dp`` script: :func:`main`, then a quick exit.

    Before the process ends, the objects loaded so far are moved out of the garbage
    collector's reach (:func:`gc.freeze`): the interpreter's last collections over everything
    numba, scipy, ArviZ and matplotlib loaded take about a second, which Ctrl-C would otherwise
    wait for. Every file has been written and closed by then.
    """
    import gc

    status = main()
    gc.freeze()
    return status


if __name__ == "__main__":
    sys.exit(console())
