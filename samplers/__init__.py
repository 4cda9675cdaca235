"""Samplers of MCMC-DP-Est: numba kernels and thin runners.

The default sampler on the exact marginal likelihood (:mod:`samplers.exact`, run by
:mod:`samplers.driver`) and the paper's MHAAR (:mod:`samplers.mhaar`). The package imports only
numpy, numba and the standard library (``tests/test_conventions.py`` checks it); the one
run-time use of SciPy is the address of its compiled incomplete beta functions, which
:mod:`samplers._special` looks up for the kernels.
"""

from .mhaar import AUX_PROPOSALS, SamplerConfig, aux_params, run_mhaar

__all__ = ["AUX_PROPOSALS", "SamplerConfig", "aux_params", "run_mhaar"]
