"""The default sampler, on the exact marginal likelihood of each challenge base.

:mod:`~samplers.exact.runner` runs it in one call (``run_exact``: start, run, extend, restart;
``ExactData``, ``ExactConfig`` in, ``ExactResult`` out, re-exported here on first use with
``build_model`` and ``exact_kernels``); :mod:`~samplers.exact.driver` builds the model and runs
chains in chunks; :mod:`~samplers.exact.chain` is the chain. The planner's grid
(:mod:`~samplers.exact.grid`) and the pointwise log likelihood
(:mod:`~samplers.exact.pointwise`) use the same likelihood.
"""

__all__ = [
    "ExactConfig",
    "ExactData",
    "ExactDraws",
    "ExactResult",
    "ModeRestart",
    "build_model",
    "exact_kernels",
    "run_exact",
]


def __getattr__(name: str):
    if name in __all__:
        if name == "build_model":
            from . import driver as module
        else:
            from . import runner as module
        value = getattr(module, name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
