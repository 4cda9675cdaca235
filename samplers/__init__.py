"""Samplers of MCMC-DP-Est: numba kernels and thin runners (the newcomer's map).

Four sub-packages; imports go one way, ``numerics`` <- ``model`` <- ``exact`` and ``mhaar``, and
neither sampler imports the other:

``samplers.numerics``
    Numerics that know nothing of the model: :mod:`~samplers.numerics.special` (SciPy's
    incomplete beta functions called from numba, log B, x log y, the logistic function),
    :mod:`~samplers.numerics.logsum` (log-sum-exp), :mod:`~samplers.numerics.quadrature`
    (Gauss-Legendre), :mod:`~samplers.numerics.smallsort`, :mod:`~samplers.numerics.arrays`,
    :mod:`~samplers.numerics.jit` (the options every kernel is compiled with) and
    :mod:`~samplers.numerics.parallel_compile` (kernels compiled into the cache by worker
    processes side by side).
``samplers.model``
    The model both samplers share: :mod:`~samplers.model.codes` (the integer codes the kernels
    switch on), :mod:`~samplers.model.densities` (priors of eps and s, the likelihood g of one
    base, the columns of the per-base matrix P), :mod:`~samplers.model.params` (P itself),
    :mod:`~samplers.model.region` and :mod:`~samplers.model.band_geometry` (the band R_s: its
    edges, area, membership and uniform draws), :mod:`~samplers.model.binomial`,
    :mod:`~samplers.model.binomial_block` and :mod:`~samplers.model.cdf_table` (the exact
    binomial likelihood of a base, integrated over R_s), :mod:`~samplers.model.band_quadrature`
    (the same for over-dispersed bases), :mod:`~samplers.model.transforms` (the coordinates z
    and the prior of z with its Jacobian) and :mod:`~samplers.model.moves` (the walk and ridge
    steps).
``samplers.exact``
    The default sampler on the exact likelihood: :mod:`~samplers.exact.runner` (``run_exact``:
    start, run, extend and restart in one call), :mod:`~samplers.exact.driver` (model, start,
    chains in chunks), :mod:`~samplers.exact.chain` (the chain: a loop over the moves of
    :mod:`~samplers.exact.moves`), :mod:`~samplers.exact.posterior` (its target),
    :mod:`~samplers.exact.state` (its named tuples), :mod:`~samplers.exact.table` and
    :mod:`~samplers.exact.surrogate` (the likelihood table), the proposals
    (:mod:`~samplers.exact.table_proposal`, :mod:`~samplers.exact.fitted_proposal`),
    :mod:`~samplers.exact.pointwise` and the planner's :mod:`~samplers.exact.grid`.
``samplers.mhaar``
    The paper's MHAAR: :mod:`~samplers.mhaar.runner` (``run_mhaar``),
    :mod:`~samplers.mhaar.chain` (a loop over the joint, ridge and nuisance moves),
    :mod:`~samplers.mhaar.moves` (the MHAAR move: averaged acceptance ratios) and
    :mod:`~samplers.mhaar.aux_proposals`.

The package imports only numpy, numba and the standard library
(``tests/project/test_conventions.py`` checks it); the one run-time use of SciPy is the address
of its compiled incomplete beta functions, which :mod:`samplers.numerics.special` looks up for
the kernels.

The names below are imported on first use (PEP 562), so that ``samplers.model.codes`` can be
read without importing numba.
"""

#: The exact sampler's runner (``samplers.exact``) and MHAAR's (``samplers.mhaar``).
_EXACT = ["ExactConfig", "ExactData", "ExactDraws", "ExactResult", "ModeRestart", "run_exact"]
_MHAAR = ["AUX_PROPOSALS", "SamplerConfig", "run_mhaar"]
__all__ = [*_EXACT, *_MHAAR, "aux_params"]


def __getattr__(name: str):
    if name in __all__:
        if name == "aux_params":
            from .model import params as module
        elif name in _EXACT:
            from .exact import runner as module
        else:
            from .mhaar import runner as module
        value = getattr(module, name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
