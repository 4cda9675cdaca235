"""Simulators and studies shared by the benchmarks and the tests.

Each module simulates the data of a study (LiRA score runs, a real digits run, pooled-bound
audits, the stress cases, ...) that a benchmark runs at full size and a test runs reduced; the
tests import them from here (``from benchmarks._support import lira_sim``), as pytest puts the
repository root on ``sys.path``.

What stays in ``tests/``: the independent quadrature references (``tests/reference/``), which
are the tests' truth; a study here that compares against them imports ``tests.reference``
(``stress_cases``, ``gdp_shapes``, ``dispersion_study``, ``plan_grid_check``), as a benchmark
may. The tests' own criteria and fixtures stay in ``tests/_support/`` (``mc_error``,
``power``, ``mutations``, ...). A module here imports neither of those.
"""
