"""Shared numerics of the kernels: nothing here knows the model.

:mod:`~samplers.numerics.special` (SciPy's incomplete beta functions called from numba, log B,
x log y, the logistic function), :mod:`~samplers.numerics.smallsort` (sorting a few numbers in a
kernel) and :mod:`~samplers.numerics.quadrature` (the Gauss-Legendre table).
"""
