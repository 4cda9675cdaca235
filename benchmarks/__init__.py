"""Benchmarks and studies: scripts that print the figures the docs quote.

A regular package (not a namespace one), so ``benchmarks._support`` cannot be shadowed by an
installed distribution's top-level ``benchmarks``. Each script runs as
``python -m benchmarks.x`` from the repository root, and those that put the root on
``sys.path`` themselves also as ``python benchmarks/x.py``.
"""
