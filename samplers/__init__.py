"""Numba kernels of the MHAAR sampler (numpy and numba only)."""
