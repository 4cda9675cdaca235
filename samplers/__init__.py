"""Samplers of MCMC-DP-Est: numba kernels and thin runners.

The default sampler on the exact marginal likelihood (:mod:`samplers.exact`, run by
:mod:`samplers.driver`) and the paper's MHAAR (:mod:`samplers.mhaar`). MHAAR's kernels are split
by concern: the priors and the likelihood of one base (:mod:`samplers.densities`, which also lists
the columns of the per-base matrix P), the band's geometry (:mod:`samplers.band_geometry`), the
auxiliary proposals (:mod:`samplers.aux_proposals`), the band quadrature of over-dispersed bases
(:mod:`samplers.band_quadrature`, which the exact sampler uses too), one MHAAR move
(:mod:`samplers.mhaar_moves`) and the chain (:mod:`samplers.mhaar_chain`). The package imports only
numpy, numba and the standard library (``tests/test_conventions.py`` checks it); the one
run-time use of SciPy is the address of its compiled incomplete beta functions, which
:mod:`samplers._special` looks up for the kernels.

The names below are imported on first use (PEP 562), so that ``samplers.codes`` (the integer
codes the kernels switch on) can be read without importing numba.
"""

__all__ = ["AUX_PROPOSALS", "SamplerConfig", "aux_params", "run_mhaar"]


def __getattr__(name: str):
    if name in __all__:
        from . import mhaar

        value = getattr(mhaar, name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
