"""``python -m bayes_dp.cli``: the same command as ``bayes-dp`` and ``python -m bayes_dp``."""

from bayes_dp.cli import main

raise SystemExit(main())
