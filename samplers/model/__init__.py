"""The model both samplers share: codes, densities, the band R_s, likelihoods, transforms, moves.

Importing this package imports nothing else (``samplers.model.codes`` is read without numba);
each module is imported by name.
"""
