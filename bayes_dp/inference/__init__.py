"""Running the samplers on count evidence.

The model, the sampler settings, the runners of the exact and MHAAR samplers, the minor-mode
check, pointwise likelihoods, progress and first-run detection.
"""
