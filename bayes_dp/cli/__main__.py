"""``python -m bayes_dp.cli``: the same command as ``bayes-dp`` and ``python -m bayes_dp``."""

if __name__ == "__main__":
    from bayes_dp.cli import main

    raise SystemExit(main())
