"""The default sampler, on the exact marginal likelihood of each challenge base.

:mod:`~samplers.exact.driver` builds the model and runs chains in chunks;
:mod:`~samplers.exact.chain` is the chain. The planner's grid (:mod:`~samplers.exact.grid`) and
the pointwise log likelihood (:mod:`~samplers.exact.pointwise`) use the same likelihood.
"""
