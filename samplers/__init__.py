"""MHAAR sampler of MCMC-DP-Est: numba kernels and a thin runner (numpy and numba only)."""

from .mhaar import AUX_PROPOSALS, SamplerConfig, aux_params, run_mhaar

__all__ = ["AUX_PROPOSALS", "SamplerConfig", "aux_params", "run_mhaar"]
