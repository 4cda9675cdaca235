"""Checking estimators: simulation-based calibration and side-by-side comparison."""
